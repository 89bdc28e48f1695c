-- The journal is append-only: a transfer is never changed or deleted. (Since
-- 20261122170000_ledger_pending_posted the journal is the one table "transfers"; the legs
-- are the view "entries".)
--
-- Installed by 20261121064738_ledger_holds.
CREATE OR REPLACE FUNCTION "ledger_append_only"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'ledger: % is append-only (% refused)', TG_TABLE_NAME, TG_OP USING ERRCODE = 'restrict_violation';
END;
$$;
CREATE OR REPLACE TRIGGER "transfers_append_only" BEFORE UPDATE OR DELETE ON "transfers" FOR EACH ROW EXECUTE FUNCTION "ledger_append_only"();
