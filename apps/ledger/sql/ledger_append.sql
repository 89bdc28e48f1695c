-- Appends a batch's transfers in commit order: the advisory lock (per database) is
-- taken last, after every account lock, and held until commit, so the next batch
-- numbers its rows only after this one is visible.
--
-- seq is assigned here (max + 1 under the advisory lock), not by a sequence, so that it
-- is gap-free and in commit order: the relay tails the journal by seq (view
-- ledger_events, relay_checkpoints).
--
-- Installed by 20261122170000_ledger_pending_posted.
CREATE OR REPLACE FUNCTION "ledger_append"(p_rows "transfers"[]) RETURNS VOID LANGUAGE plpgsql AS $$
DECLARE
  base BIGINT;
BEGIN
  IF coalesce(array_length(p_rows, 1), 0) = 0 THEN
    RETURN;
  END IF;
  PERFORM pg_advisory_xact_lock(7160160160);
  SELECT coalesce(max("seq"), 0) INTO base FROM "transfers";
  INSERT INTO "transfers" ("id", "seq", "operation_id", "request_hash", "kind", "tenant_id", "units", "hold_id", "reason",
    "available_after", "held_after", "created_at", "pending_units", "expires_at", "debit_account", "credit_account", "event_id", "request_id")
  SELECT x."id", base + x."ordinality", x."operation_id", x."request_hash", x."kind", x."tenant_id", x."units", x."hold_id", x."reason",
    x."available_after", x."held_after", x."created_at", x."pending_units", x."expires_at", x."debit_account", x."credit_account", x."event_id", x."request_id"
  FROM unnest(p_rows) WITH ORDINALITY AS x;
END;
$$;
