-- Two costs of ledger_apply found with perf on its backend (docs/benchmarks/optimizations.md):
--
-- 1. PL/pgSQL plans each statement once per connection and keeps a generic plan. Planned
--    while "transfers" was small (a new database, before any ANALYZE), the lookups by
--    operation id and hold id became sequential scans, and stayed so for the connection's
--    life as the table grew: about 60 % of the backend's CPU in the ledger's benchmark,
--    and growing with every movement. Every statement these functions run looks rows up
--    by an indexed key, so they run with enable_seqscan off (the triggers they fire
--    inherit it): the plans are index scans whatever the table's size when planned.
--
-- 2. Each movement's answer was a RETURN QUERY SELECT (a query through SPI per
--    movement); the same rows are now returned with RETURN NEXT after assigning the
--    result columns, which PL/pgSQL evaluates without the executor.
--
-- Same arguments, same rows, same order.
CREATE OR REPLACE FUNCTION "ledger_apply"(
  p_kind TEXT[], p_operation_id TEXT[], p_request_hash TEXT[], p_tenant_id TEXT[], p_hold_id TEXT[], p_units BIGINT[],
  p_expires_at TIMESTAMPTZ[], p_ttl_seconds INTEGER[], p_reason TEXT[],
  p_new_hold_id TEXT[], p_transfer_id TEXT[], p_event_id TEXT[], p_request_id TEXT[]
) RETURNS TABLE (
  "idx" INTEGER, "outcome" TEXT, "transfer_id" TEXT, "available" BIGINT, "held" BIGINT,
  "hold_id" TEXT,
  "id" TEXT, "tenant_id" TEXT, "units" BIGINT, "status" TEXT, "captured_units" BIGINT,
  "expires_at" TIMESTAMPTZ, "created_at" TIMESTAMPTZ, "settled_at" TIMESTAMPTZ
)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
  n INT := coalesce(array_length(p_kind, 1), 0);
  v_now TIMESTAMPTZ(3) := now();
  -- accounts: running balances of the locked tenants
  a_ids TEXT[] := '{}';
  a_available BIGINT[] := '{}';
  a_held BIGINT[] := '{}';
  a_posted BIGINT[] := '{}';
  a_changed BOOLEAN[] := '{}';
  -- transfers the batch names: stored ones, then the batch's own
  ops TEXT[];
  op_rows "transfers"[];
  pend_ids TEXT[];
  pend_rows "transfers"[];
  settle_ids TEXT[];
  settle_rows "transfers"[];
  new_rows "transfers"[] := '{}';
  r "transfers";
  p "transfers";
  s "transfers";
  k INT;
  j INT;
  v_units BIGINT;
  v_captured BIGINT;
  v_released BIGINT;
  v_expires TIMESTAMPTZ(3);
  acc RECORD;
BEGIN
  -- Every movement of a tenant queues on its account row, duplicates included.
  FOR acc IN
    SELECT a."tenant_id", a."available", a."held", a."debits_posted" FROM "accounts" a
    WHERE a."tenant_id" IN (
      SELECT t FROM unnest(p_tenant_id) AS t WHERE t IS NOT NULL
      UNION
      SELECT h."tenant_id" FROM "transfers" h WHERE h."kind" = 'reserve' AND h."hold_id" = ANY (p_hold_id)
    )
    ORDER BY a."tenant_id"
    FOR NO KEY UPDATE
  LOOP
    a_ids := a_ids || acc."tenant_id";
    a_available := a_available || acc."available";
    a_held := a_held || acc."held";
    a_posted := a_posted || acc."debits_posted";
    a_changed := a_changed || false;
  END LOOP;

  -- Under those locks, what is stored is final for this batch.
  SELECT coalesce(array_agg(t."operation_id"), '{}'), coalesce(array_agg(t), '{}') INTO ops, op_rows
  FROM "transfers" t WHERE t."operation_id" = ANY (p_operation_id);
  -- (Two statements, one per partial index: a single one with kind IN (...) is a sequential
  -- scan. None when the batch settles nothing.)
  IF cardinality(array_remove(p_hold_id, NULL)) > 0 THEN
    SELECT coalesce(array_agg(t."hold_id"), '{}'), coalesce(array_agg(t), '{}') INTO pend_ids, pend_rows
    FROM "transfers" t WHERE t."hold_id" = ANY (p_hold_id) AND t."kind" = 'reserve';
    SELECT coalesce(array_agg(t."hold_id"), '{}'), coalesce(array_agg(t), '{}') INTO settle_ids, settle_rows
    FROM "transfers" t WHERE t."hold_id" = ANY (p_hold_id) AND t."kind" IN ('capture', 'void');
  ELSE
    pend_ids := '{}';
    pend_rows := '{}';
    settle_ids := '{}';
    settle_rows := '{}';
  END IF;

  FOR i IN 1 .. n LOOP
    k := array_position(ops, p_operation_id[i]);
    IF p_kind[i] = 'reserve' THEN
      IF k IS NOT NULL THEN
        r := op_rows[k];
        IF r."kind" <> 'reserve' OR r."request_hash" <> p_request_hash[i] THEN
          "idx" := i; "outcome" := 'conflict'; "transfer_id" := NULL::TEXT; "available" := NULL::BIGINT; "held" := NULL::BIGINT;
          "hold_id" := NULL::TEXT; "id" := NULL::TEXT; "tenant_id" := NULL::TEXT; "units" := NULL::BIGINT; "status" := NULL::TEXT;
          "captured_units" := NULL::BIGINT; "expires_at" := NULL::TIMESTAMPTZ; "created_at" := NULL::TIMESTAMPTZ; "settled_at" := NULL::TIMESTAMPTZ;
          RETURN NEXT;
        ELSE
          "idx" := i; "outcome" := 'replayed'; "transfer_id" := r."id"; "available" := r."available_after"; "held" := r."held_after";
          "hold_id" := r."hold_id"; "id" := NULL::TEXT; "tenant_id" := NULL::TEXT; "units" := r."units"; "status" := NULL::TEXT;
          "captured_units" := NULL::BIGINT; "expires_at" := r."expires_at"::TIMESTAMPTZ; "created_at" := NULL::TIMESTAMPTZ;
          "settled_at" := NULL::TIMESTAMPTZ;
          RETURN NEXT;
        END IF;
        CONTINUE;
      END IF;
      j := array_position(a_ids, p_tenant_id[i]);
      IF j IS NULL OR a_available[j] < p_units[i] THEN
        "idx" := i; "outcome" := 'insufficient_balance'; "transfer_id" := NULL::TEXT; "available" := NULL::BIGINT; "held" := NULL::BIGINT;
        "hold_id" := NULL::TEXT; "id" := NULL::TEXT; "tenant_id" := NULL::TEXT; "units" := NULL::BIGINT; "status" := NULL::TEXT;
        "captured_units" := NULL::BIGINT; "expires_at" := NULL::TIMESTAMPTZ; "created_at" := NULL::TIMESTAMPTZ; "settled_at" := NULL::TIMESTAMPTZ;
        RETURN NEXT;
        CONTINUE;
      END IF;
      v_expires := coalesce(p_expires_at[i], now() + make_interval(secs => p_ttl_seconds[i]));
      IF v_expires <= now() OR v_expires > now() + INTERVAL '365 days' THEN
        "idx" := i; "outcome" := 'invalid_expiry'; "transfer_id" := NULL::TEXT; "available" := NULL::BIGINT; "held" := NULL::BIGINT;
        "hold_id" := NULL::TEXT; "id" := NULL::TEXT; "tenant_id" := NULL::TEXT; "units" := NULL::BIGINT; "status" := NULL::TEXT;
        "captured_units" := NULL::BIGINT; "expires_at" := NULL::TIMESTAMPTZ; "created_at" := NULL::TIMESTAMPTZ; "settled_at" := NULL::TIMESTAMPTZ;
        RETURN NEXT;
        CONTINUE;
      END IF;
      a_available[j] := a_available[j] - p_units[i];
      a_held[j] := a_held[j] + p_units[i];
      a_changed[j] := true;
      r := "ledger_transfer"(p_transfer_id[i], p_operation_id[i], p_request_hash[i], 'reserve', p_tenant_id[i], p_units[i], p_new_hold_id[i],
        p_reason[i], a_available[j], a_held[j], v_now, NULL, v_expires, 'available', 'held', p_event_id[i], p_request_id[i]);
      new_rows := new_rows || r;
      ops := ops || r."operation_id";
      op_rows := op_rows || r;
      pend_ids := pend_ids || r."hold_id";
      pend_rows := pend_rows || r;
      "idx" := i; "outcome" := 'ok'; "transfer_id" := r."id"; "available" := r."available_after"; "held" := r."held_after"; "hold_id" := r."hold_id";
      "id" := NULL::TEXT; "tenant_id" := NULL::TEXT; "units" := r."units"; "status" := NULL::TEXT; "captured_units" := NULL::BIGINT;
      "expires_at" := r."expires_at"::TIMESTAMPTZ; "created_at" := NULL::TIMESTAMPTZ; "settled_at" := NULL::TIMESTAMPTZ;
      RETURN NEXT;
    ELSIF p_kind[i] IN ('capture', 'void') THEN
      j := array_position(pend_ids, p_hold_id[i]);
      p := CASE WHEN j IS NULL THEN NULL ELSE pend_rows[j] END;
      j := array_position(settle_ids, p_hold_id[i]);
      s := CASE WHEN j IS NULL THEN NULL ELSE settle_rows[j] END;
      IF k IS NOT NULL THEN
        r := op_rows[k];
        IF r."kind" <> p_kind[i] OR r."request_hash" <> p_request_hash[i] THEN
          "idx" := i; "outcome" := 'conflict'; "transfer_id" := NULL::TEXT; "available" := NULL::BIGINT; "held" := NULL::BIGINT;
          "hold_id" := NULL::TEXT; "id" := p."hold_id"; "tenant_id" := p."tenant_id"; "units" := p."units";
          "status" := CASE s."kind" WHEN 'capture' THEN 'captured' WHEN 'void' THEN 'voided' ELSE CASE WHEN p."id" IS NULL THEN NULL ELSE 'open' END END;
          "captured_units" := CASE WHEN s."kind" = 'capture' THEN s."units" END; "expires_at" := p."expires_at"::TIMESTAMPTZ;
          "created_at" := p."created_at"::TIMESTAMPTZ; "settled_at" := s."created_at"::TIMESTAMPTZ;
          RETURN NEXT;
        ELSE
          -- A stored settlement of the same kind and parameters is of this hold (the hash names it).
          "idx" := i; "outcome" := 'replayed'; "transfer_id" := r."id"; "available" := r."available_after"; "held" := r."held_after";
          "hold_id" := NULL::TEXT; "id" := p."hold_id"; "tenant_id" := p."tenant_id"; "units" := p."units";
          "status" := CASE s."kind" WHEN 'capture' THEN 'captured' WHEN 'void' THEN 'voided' ELSE 'open' END;
          "captured_units" := CASE WHEN s."kind" = 'capture' THEN s."units" END; "expires_at" := p."expires_at"::TIMESTAMPTZ;
          "created_at" := p."created_at"::TIMESTAMPTZ; "settled_at" := s."created_at"::TIMESTAMPTZ;
          RETURN NEXT;
        END IF;
        CONTINUE;
      END IF;
      IF p."id" IS NULL OR s."id" IS NOT NULL THEN
        "idx" := i; "outcome" := CASE WHEN p."id" IS NULL THEN 'not_found' ELSE 'settled' END; "transfer_id" := NULL::TEXT;
        "available" := NULL::BIGINT; "held" := NULL::BIGINT; "hold_id" := NULL::TEXT; "id" := p."hold_id"; "tenant_id" := p."tenant_id";
        "units" := p."units";
        "status" := CASE s."kind" WHEN 'capture' THEN 'captured' WHEN 'void' THEN 'voided' ELSE CASE WHEN p."id" IS NULL THEN NULL ELSE 'open' END END;
        "captured_units" := CASE WHEN s."kind" = 'capture' THEN s."units" END; "expires_at" := p."expires_at"::TIMESTAMPTZ;
        "created_at" := p."created_at"::TIMESTAMPTZ; "settled_at" := s."created_at"::TIMESTAMPTZ;
        RETURN NEXT;
        CONTINUE;
      END IF;
      v_captured := CASE WHEN p_kind[i] = 'capture' THEN p_units[i] ELSE 0 END;
      IF v_captured IS NULL OR v_captured < 0 OR v_captured > p."units" THEN
        "idx" := i; "outcome" := 'over_hold'; "transfer_id" := NULL::TEXT; "available" := NULL::BIGINT; "held" := NULL::BIGINT;
        "hold_id" := NULL::TEXT; "id" := p."hold_id"; "tenant_id" := p."tenant_id"; "units" := p."units"; "status" := 'open';
        "captured_units" := NULL::BIGINT; "expires_at" := p."expires_at"::TIMESTAMPTZ; "created_at" := p."created_at"::TIMESTAMPTZ;
        "settled_at" := NULL::TIMESTAMPTZ;
        RETURN NEXT;
        CONTINUE;
      END IF;
      v_released := p."units" - v_captured;
      j := array_position(a_ids, p."tenant_id");
      IF j IS NULL THEN
        RAISE EXCEPTION 'ledger_apply: the account of hold % was not locked', p."hold_id";
      END IF;
      a_available[j] := a_available[j] + v_released;
      a_held[j] := a_held[j] - p."units";
      a_posted[j] := a_posted[j] + v_captured;
      a_changed[j] := true;
      v_units := CASE WHEN p_kind[i] = 'capture' THEN v_captured ELSE v_released END;
      r := "ledger_transfer"(p_transfer_id[i], p_operation_id[i], p_request_hash[i], p_kind[i], p."tenant_id", v_units, p."hold_id",
        p_reason[i], a_available[j], a_held[j], v_now, p."units", NULL, 'held',
        CASE WHEN p_kind[i] = 'capture' THEN 'revenue' ELSE 'available' END, p_event_id[i], p_request_id[i]);
      new_rows := new_rows || r;
      ops := ops || r."operation_id";
      op_rows := op_rows || r;
      settle_ids := settle_ids || r."hold_id";
      settle_rows := settle_rows || r;
      "idx" := i; "outcome" := 'ok'; "transfer_id" := r."id"; "available" := r."available_after"; "held" := r."held_after"; "hold_id" := NULL::TEXT;
      "id" := p."hold_id"; "tenant_id" := p."tenant_id"; "units" := p."units";
      "status" := CASE WHEN p_kind[i] = 'capture' THEN 'captured' ELSE 'voided' END;
      "captured_units" := CASE WHEN p_kind[i] = 'capture' THEN v_captured END; "expires_at" := p."expires_at"::TIMESTAMPTZ;
      "created_at" := p."created_at"::TIMESTAMPTZ; "settled_at" := v_now::TIMESTAMPTZ;
      RETURN NEXT;
    ELSE
      RAISE EXCEPTION 'ledger_apply: unknown kind %', p_kind[i];
    END IF;
  END LOOP;

  IF array_length(new_rows, 1) > 0 THEN
    UPDATE "accounts" a SET "available" = u."available", "held" = u."held", "debits_pending" = u."held", "debits_posted" = u."posted", "updated_at" = v_now
    FROM unnest(a_ids, a_available, a_held, a_posted, a_changed) AS u ("tenant_id", "available", "held", "posted", "changed")
    WHERE a."tenant_id" = u."tenant_id" AND u."changed";
    PERFORM "ledger_append"(new_rows);
  END IF;
END;
$$;

ALTER FUNCTION "ledger_apply"(TEXT[], TEXT[], TEXT[], TEXT[], TEXT[], BIGINT[], TIMESTAMPTZ[], INTEGER[], TEXT[], TEXT[], TEXT[], TEXT[], TEXT[]) SET enable_seqscan = off;
ALTER FUNCTION "ledger_credit"(TEXT, TEXT, TEXT, BIGINT, TEXT, TEXT, TEXT, TEXT) SET enable_seqscan = off;
