-- Group commit: many reserve / capture / void operations in one statement and one
-- transaction (src/domain/movement-queue.ts sends what queued up while the previous
-- batch was in flight). Each operation is still decided on its own by
-- ledger_reserve / ledger_settle, in the order given; results come back one row
-- per operation, `idx` = its 1-based position.
--
-- Deadlock freedom: the batch first locks every account it touches in tenant_id
-- order (the tenants of its reserves and of the holds it settles). A hold's row is
-- locked only by a transaction that already holds its tenant's account, so holds
-- never form a cycle either. Every reserve and settle of the service goes through
-- this function (a single call is a batch of one).
CREATE FUNCTION "ledger_apply"(
  p_kind TEXT[], p_operation_id TEXT[], p_request_hash TEXT[], p_tenant_id TEXT[], p_hold_id TEXT[], p_units BIGINT[],
  p_expires_at TIMESTAMPTZ[], p_ttl_seconds INTEGER[], p_reason TEXT[],
  p_new_hold_id TEXT[], p_transfer_id TEXT[], p_event_id TEXT[], p_request_id TEXT[]
) RETURNS TABLE (
  "idx" INTEGER, "outcome" TEXT, "transfer_id" TEXT, "available" BIGINT, "held" BIGINT,
  -- reserve: the new hold; settle: NULL (the hold is in the columns below)
  "hold_id" TEXT,
  "id" TEXT, "tenant_id" TEXT, "units" BIGINT, "status" TEXT, "captured_units" BIGINT,
  "expires_at" TIMESTAMPTZ, "created_at" TIMESTAMPTZ, "settled_at" TIMESTAMPTZ
)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
BEGIN
  PERFORM 1 FROM "accounts" a
  WHERE a."tenant_id" IN (
    SELECT t FROM unnest(p_tenant_id) AS t WHERE t IS NOT NULL
    UNION
    SELECT h."tenant_id" FROM "holds" h WHERE h."id" = ANY (p_hold_id)
  )
  ORDER BY a."tenant_id"
  FOR NO KEY UPDATE;

  FOR i IN 1 .. coalesce(array_length(p_kind, 1), 0) LOOP
    IF p_kind[i] = 'reserve' THEN
      RETURN QUERY SELECT i, r."outcome", r."transfer_id", r."available", r."held", r."hold_id",
        NULL::TEXT, NULL::TEXT, r."units", NULL::TEXT, NULL::BIGINT, r."expires_at", NULL::TIMESTAMPTZ, NULL::TIMESTAMPTZ
      FROM "ledger_reserve"(p_operation_id[i], p_request_hash[i], p_tenant_id[i], p_units[i], p_expires_at[i], p_ttl_seconds[i],
        p_reason[i], p_new_hold_id[i], p_transfer_id[i], p_event_id[i], p_request_id[i]) AS r;
    ELSE
      RETURN QUERY SELECT i, s."outcome", s."transfer_id", s."available", s."held", NULL::TEXT,
        s."id", s."tenant_id", s."units", s."status", s."captured_units", s."expires_at", s."created_at", s."settled_at"
      FROM "ledger_settle"(p_kind[i], p_operation_id[i], p_request_hash[i], p_hold_id[i], p_units[i], p_reason[i],
        p_transfer_id[i], p_event_id[i], p_request_id[i]) AS s;
    END IF;
  END LOOP;
END;
$$;
