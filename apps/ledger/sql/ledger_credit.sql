-- A credit: adds units to a tenant's available balance (creating its account on the
-- first credit) and appends one 'credit' transfer (funding -> available), or answers
-- 'replayed' (same operation id and request hash) or 'conflict' (same operation id,
-- other request) without writing.
--
-- enable_seqscan = off (decision 0165): PL/pgSQL plans each statement once per connection and keeps a
-- generic plan; planned while "transfers" was small, the lookups by operation id became
-- sequential scans for the connection's life. Every statement here looks rows up by an
-- indexed key (docs/benchmarks/optimizations.md).
--
-- Installed by 20261122170000_ledger_pending_posted; enable_seqscan since
-- 20261122230000_ledger_apply_plans.
CREATE OR REPLACE FUNCTION "ledger_credit"(
  p_operation_id TEXT, p_request_hash TEXT, p_tenant_id TEXT, p_units BIGINT, p_reason TEXT,
  p_transfer_id TEXT, p_event_id TEXT, p_request_id TEXT
) RETURNS TABLE ("outcome" TEXT, "transfer_id" TEXT, "available" BIGINT, "held" BIGINT)
LANGUAGE plpgsql
SET enable_seqscan = off
AS $$
#variable_conflict use_column
DECLARE
  prior "transfers"%ROWTYPE;
  v_available BIGINT;
  v_held BIGINT;
  v_now TIMESTAMPTZ(3) := now();
BEGIN
  INSERT INTO "accounts" ("tenant_id") VALUES (p_tenant_id) ON CONFLICT ("tenant_id") DO NOTHING;
  PERFORM 1 FROM "accounts" WHERE "tenant_id" = p_tenant_id FOR NO KEY UPDATE;
  SELECT * INTO prior FROM "transfers" WHERE "operation_id" = p_operation_id;
  IF prior."id" IS NOT NULL THEN
    IF prior."kind" <> 'credit' OR prior."request_hash" <> p_request_hash THEN
      RETURN QUERY SELECT 'conflict', NULL::TEXT, NULL::BIGINT, NULL::BIGINT;
    ELSE
      RETURN QUERY SELECT 'replayed', prior."id", prior."available_after", prior."held_after";
    END IF;
    RETURN;
  END IF;
  UPDATE "accounts" SET "available" = "available" + p_units, "credits_posted" = "credits_posted" + p_units, "updated_at" = v_now
  WHERE "tenant_id" = p_tenant_id RETURNING "available", "held" INTO v_available, v_held;
  PERFORM "ledger_append"(ARRAY["ledger_transfer"(p_transfer_id, p_operation_id, p_request_hash, 'credit', p_tenant_id, p_units, NULL,
    p_reason, v_available, v_held, v_now, NULL, NULL, 'funding', 'available', p_event_id, p_request_id)]);
  RETURN QUERY SELECT 'ok', p_transfer_id, v_available, v_held;
END;
$$;
