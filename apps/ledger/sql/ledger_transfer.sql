-- One transfer row, by column name (independent of the table's column order). The
-- movement functions build the rows they append with it.
--
-- Installed by 20261122170000_ledger_pending_posted.
CREATE OR REPLACE FUNCTION "ledger_transfer"(
  p_id TEXT, p_operation_id TEXT, p_request_hash TEXT, p_kind TEXT, p_tenant_id TEXT, p_units BIGINT, p_hold_id TEXT,
  p_reason TEXT, p_available_after BIGINT, p_held_after BIGINT, p_created_at TIMESTAMPTZ, p_pending_units BIGINT,
  p_expires_at TIMESTAMPTZ, p_debit_account TEXT, p_credit_account TEXT, p_event_id TEXT, p_request_id TEXT
) RETURNS "transfers" LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
  r "transfers";
BEGIN
  r."id" := p_id;
  r."operation_id" := p_operation_id;
  r."request_hash" := p_request_hash;
  r."kind" := p_kind;
  r."tenant_id" := p_tenant_id;
  r."units" := p_units;
  r."hold_id" := p_hold_id;
  r."reason" := p_reason;
  r."available_after" := p_available_after;
  r."held_after" := p_held_after;
  r."created_at" := p_created_at;
  r."pending_units" := p_pending_units;
  r."expires_at" := p_expires_at;
  r."debit_account" := p_debit_account;
  r."credit_account" := p_credit_account;
  r."event_id" := p_event_id;
  r."request_id" := p_request_id;
  RETURN r;
END;
$$;
