-- Second line of defence: every settlement names a pending transfer of the same tenant,
-- before it, for exactly its units; a post or release names an allotment of its tenant
-- whose pending transfer came before it and that no settlement closed before it; a
-- capture never settles an allotment; a void of one settles exactly what its posts and
-- releases left (the allotments row is written before the batch's transfers, so it holds
-- the batch's totals).
--
-- A row trigger that fires for settlements, posts and releases only, at the end of the
-- statement (so a batch's own pending transfers count): index lookups only. (A statement
-- trigger over a transition table cost about 190 µs of PostgreSQL CPU per reserve +
-- capture at 16 movements per batch: its queries are planned every time.)
--
-- History: 20261122170000_ledger_pending_posted, 20261125180000_ledger_allotments,
-- 20261125190000_ledger_allotments_lean (one lookup for the pending transfer and its
-- allotment row).
CREATE OR REPLACE FUNCTION "ledger_settlement_valid"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  v_pending BIGINT;
  v_allotment BOOLEAN;
  v_left BIGINT;
BEGIN
  -- One lookup for every kind: the pending transfer, and its allotment row if it is one.
  SELECT r."units", a."hold_id" IS NOT NULL, a."units" - a."posted" - a."released" INTO v_pending, v_allotment, v_left
  FROM "transfers" r LEFT JOIN "allotments" a ON a."hold_id" = r."hold_id" AND a."tenant_id" = r."tenant_id"
  WHERE r."kind" = 'reserve' AND r."hold_id" = NEW."hold_id" AND r."tenant_id" = NEW."tenant_id" AND r."seq" < NEW."seq";
  IF NEW."kind" IN ('post', 'release') THEN
    IF v_allotment IS NOT TRUE
       OR EXISTS (SELECT 1 FROM "transfers" s WHERE s."kind" IN ('capture', 'void') AND s."hold_id" = NEW."hold_id" AND s."seq" < NEW."seq") THEN
      RAISE EXCEPTION 'ledger: % % does not draw on an open allotment %', NEW."kind", NEW."id", NEW."hold_id" USING ERRCODE = 'check_violation';
    END IF;
  ELSIF v_allotment THEN
    IF NEW."kind" <> 'void' OR NEW."pending_units" <> v_left THEN
      RAISE EXCEPTION 'ledger: settlement % of allotment % is not a void of what is left', NEW."id", NEW."hold_id" USING ERRCODE = 'check_violation';
    END IF;
  ELSIF v_pending IS DISTINCT FROM NEW."pending_units" THEN
    RAISE EXCEPTION 'ledger: settlement % does not match its pending transfer %', NEW."id", NEW."hold_id" USING ERRCODE = 'check_violation';
  END IF;
  RETURN NULL;
END;
$$;
CREATE OR REPLACE TRIGGER "transfers_settlement_valid" AFTER INSERT ON "transfers"
FOR EACH ROW WHEN (NEW."kind" IN ('capture', 'void', 'post', 'release')) EXECUTE FUNCTION "ledger_settlement_valid"();
