-- The movements: reserve, capture, void, and the allotments' post and release, as one
-- group-committed batch (decision 0011, one row per movement since decision 0160).
--
-- Locks every account the batch touches in tenant_id order (and the allotments it names,
-- in hold order), reads every stored operation and hold the batch names in a few
-- statements, decides each movement in order on the running balances (in variables),
-- then writes once: one UPDATE of the touched accounts, one INSERT and one UPDATE of the
-- allotments, one INSERT of the new transfers (ledger_append). One result row per
-- movement, in order (idx): its outcome ('ok', 'replayed', 'conflict',
-- 'insufficient_balance', 'not_found', 'settled', 'over_hold', 'invalid_expiry',
-- 'not_allotment', 'allotment_capture'; src/domain/outcome.ts), the balances after it
-- and the hold as it stands.
--
-- Allotments (docs/decisions/0027): per reserve, whether it is an allotment and the
-- allotment it first releases from (with the ids of that release row); kinds 'post' and
-- 'release' (p_hold_id, p_units). A void of an allotment settles what is left of it. A
-- replay of one of the batch's own posts or releases derives the allotment's totals
-- from the totals now less what the batch did since.
--
-- enable_seqscan = off (decision 0165): PL/pgSQL plans each statement once per connection and keeps a
-- generic plan. Planned while "transfers" was small (a new database, before any
-- ANALYZE), the lookups by operation id and hold id became sequential scans, and stayed
-- so for the connection's life as the table grew. Every statement this function runs
-- looks rows up by an indexed key, so it runs with enable_seqscan off (the triggers it
-- fires inherit it): the plans are index scans whatever the table's size when planned.
-- Each movement's answer is returned with RETURN NEXT after assigning the result
-- columns, which PL/pgSQL evaluates without the executor (docs/benchmarks/optimizations.md).
--
-- History: 20261121120000_ledger_apply, 20261122170000_ledger_pending_posted,
-- 20261122230000_ledger_apply_plans, 20261125180000_ledger_allotments,
-- 20261125190000_ledger_allotments_lean.
CREATE OR REPLACE FUNCTION "ledger_apply"(
  p_kind TEXT[], p_operation_id TEXT[], p_request_hash TEXT[], p_tenant_id TEXT[], p_hold_id TEXT[], p_units BIGINT[],
  p_expires_at TIMESTAMPTZ[], p_ttl_seconds INTEGER[], p_reason TEXT[],
  p_new_hold_id TEXT[], p_transfer_id TEXT[], p_event_id TEXT[], p_request_id TEXT[],
  p_allotment BOOLEAN[], p_from_hold_id TEXT[], p_from_units BIGINT[], p_from_operation_id TEXT[], p_from_transfer_id TEXT[], p_from_event_id TEXT[]
) RETURNS TABLE (
  "idx" INTEGER, "outcome" TEXT, "transfer_id" TEXT, "available" BIGINT, "held" BIGINT,
  "hold_id" TEXT,
  "id" TEXT, "tenant_id" TEXT, "units" BIGINT, "status" TEXT, "captured_units" BIGINT,
  "expires_at" TIMESTAMPTZ, "created_at" TIMESTAMPTZ, "settled_at" TIMESTAMPTZ,
  "released_units" BIGINT, "allotment" BOOLEAN
)
LANGUAGE plpgsql
SET enable_seqscan = off
AS $$
#variable_conflict use_column
DECLARE
  n INT := coalesce(array_length(p_kind, 1), 0);
  v_now TIMESTAMPTZ(3) := now();
  named_holds TEXT[] := array_remove(p_hold_id || coalesce(p_from_hold_id, '{}'), NULL);
  -- accounts: running balances of the locked tenants
  a_ids TEXT[] := '{}';
  a_available BIGINT[] := '{}';
  a_held BIGINT[] := '{}';
  a_posted BIGINT[] := '{}';
  a_changed BOOLEAN[] := '{}';
  -- allotments: running totals of those the batch names or creates
  al_ids TEXT[] := '{}';
  al_tenant TEXT[] := '{}';
  al_units BIGINT[] := '{}';
  al_posted BIGINT[] := '{}';
  al_released BIGINT[] := '{}';
  al_changed BOOLEAN[] := '{}';
  al_new BOOLEAN[] := '{}';
  al_closed BOOLEAN[] := '{}';
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
  q INT;
  v_units BIGINT;
  v_captured BIGINT;
  v_released BIGINT;
  v_from BIGINT;
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
  FROM "transfers" t WHERE t."operation_id" = ANY (p_operation_id || coalesce(p_from_operation_id, '{}'));
  -- (Two statements, one per partial index: a single one with kind IN (...) is a sequential
  -- scan. None when the batch names no hold.)
  IF cardinality(named_holds) > 0 THEN
    SELECT coalesce(array_agg(t."hold_id"), '{}'), coalesce(array_agg(t), '{}') INTO pend_ids, pend_rows
    FROM "transfers" t WHERE t."hold_id" = ANY (named_holds) AND t."kind" = 'reserve';
    SELECT coalesce(array_agg(t."hold_id"), '{}'), coalesce(array_agg(t), '{}') INTO settle_ids, settle_rows
    FROM "transfers" t WHERE t."hold_id" = ANY (named_holds) AND t."kind" IN ('capture', 'void');
    -- The allotments' rows, locked in hold order (claim reports lock them in the same order).
    FOR acc IN
      SELECT a."hold_id", a."tenant_id", a."units", a."posted", a."released" FROM "allotments" a
      WHERE a."hold_id" = ANY (named_holds) ORDER BY a."hold_id" FOR NO KEY UPDATE
    LOOP
      al_ids := al_ids || acc."hold_id";
      al_tenant := al_tenant || acc."tenant_id";
      al_units := al_units || acc."units";
      al_posted := al_posted || acc."posted";
      al_released := al_released || acc."released";
      al_changed := al_changed || false;
      al_new := al_new || false;
      al_closed := al_closed || false;
    END LOOP;
  ELSE
    pend_ids := '{}';
    pend_rows := '{}';
    settle_ids := '{}';
    settle_rows := '{}';
  END IF;

  FOR i IN 1 .. n LOOP
    k := array_position(ops, p_operation_id[i]);
    "idx" := i; "outcome" := NULL; "transfer_id" := NULL; "available" := NULL; "held" := NULL; "hold_id" := NULL;
    "id" := NULL; "tenant_id" := NULL; "units" := NULL; "status" := NULL; "captured_units" := NULL; "expires_at" := NULL;
    "created_at" := NULL; "settled_at" := NULL; "released_units" := NULL; "allotment" := NULL;
    IF p_kind[i] = 'reserve' THEN
      IF k IS NOT NULL THEN
        r := op_rows[k];
        IF r."kind" <> 'reserve' OR r."request_hash" <> p_request_hash[i] THEN
          "outcome" := 'conflict';
        ELSE
          "outcome" := 'replayed'; "transfer_id" := r."id"; "available" := r."available_after"; "held" := r."held_after";
          "hold_id" := r."hold_id"; "units" := r."units"; "expires_at" := r."expires_at";
        END IF;
        RETURN NEXT;
        CONTINUE;
      END IF;
      j := array_position(a_ids, p_tenant_id[i]);
      v_from := 0;
      IF p_from_hold_id[i] IS NOT NULL THEN
        -- First a release from an open allotment of the same tenant: checked like a release.
        q := array_position(pend_ids, p_from_hold_id[i]);
        p := CASE WHEN q IS NULL THEN NULL ELSE pend_rows[q] END;
        q := array_position(settle_ids, p_from_hold_id[i]);
        s := CASE WHEN q IS NULL THEN NULL ELSE settle_rows[q] END;
        q := array_position(al_ids, p_from_hold_id[i]);
        v_from := p_from_units[i];
        "outcome" := CASE
          WHEN array_position(ops, p_from_operation_id[i]) IS NOT NULL THEN 'conflict'
          WHEN p."id" IS NULL OR p."tenant_id" <> p_tenant_id[i] THEN 'not_found'
          WHEN q IS NULL THEN 'not_allotment'
          WHEN s."id" IS NOT NULL THEN 'settled'
          WHEN v_from IS NULL OR v_from <= 0 OR al_posted[q] + al_released[q] + v_from > al_units[q] THEN 'over_hold'
        END;
        IF "outcome" IS NOT NULL THEN
          "id" := p."hold_id"; "units" := al_units[q];
          RETURN NEXT;
          CONTINUE;
        END IF;
      END IF;
      IF j IS NULL OR a_available[j] + v_from < p_units[i] THEN
        "outcome" := 'insufficient_balance';
        RETURN NEXT;
        CONTINUE;
      END IF;
      v_expires := coalesce(p_expires_at[i], now() + make_interval(secs => p_ttl_seconds[i]));
      IF v_expires <= now() OR v_expires > now() + INTERVAL '365 days' THEN
        "outcome" := 'invalid_expiry';
        RETURN NEXT;
        CONTINUE;
      END IF;
      IF v_from > 0 THEN
        a_available[j] := a_available[j] + v_from;
        a_held[j] := a_held[j] - v_from;
        al_released[q] := al_released[q] + v_from;
        al_changed[q] := true;
        r := "ledger_transfer"(p_from_transfer_id[i], p_from_operation_id[i], p_request_hash[i], 'release', p_tenant_id[i], v_from, p_from_hold_id[i],
          p_reason[i], a_available[j], a_held[j], v_now, NULL, NULL, 'held', 'available', p_from_event_id[i], p_request_id[i]);
        new_rows := new_rows || r;
        ops := ops || r."operation_id";
        op_rows := op_rows || r;
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
      IF coalesce(p_allotment[i], false) THEN
        al_ids := al_ids || r."hold_id";
        al_tenant := al_tenant || r."tenant_id";
        al_units := al_units || r."units";
        al_posted := al_posted || 0::BIGINT;
        al_released := al_released || 0::BIGINT;
        al_changed := al_changed || true;
        al_new := al_new || true;
        al_closed := al_closed || false;
      END IF;
      "outcome" := 'ok'; "transfer_id" := r."id"; "available" := r."available_after"; "held" := r."held_after"; "hold_id" := r."hold_id";
      "units" := r."units"; "expires_at" := r."expires_at";
      RETURN NEXT;
    ELSIF p_kind[i] IN ('capture', 'void', 'post', 'release') THEN
      j := array_position(pend_ids, p_hold_id[i]);
      p := CASE WHEN j IS NULL THEN NULL ELSE pend_rows[j] END;
      j := array_position(settle_ids, p_hold_id[i]);
      s := CASE WHEN j IS NULL THEN NULL ELSE settle_rows[j] END;
      q := array_position(al_ids, p_hold_id[i]);
      -- The hold as it stands (before this movement).
      IF p."id" IS NOT NULL THEN
        "id" := p."hold_id"; "tenant_id" := p."tenant_id"; "units" := p."units";
        "status" := CASE s."kind" WHEN 'capture' THEN 'captured' WHEN 'void' THEN 'voided' ELSE 'open' END;
        "allotment" := q IS NOT NULL;
        "captured_units" := CASE WHEN q IS NOT NULL THEN al_posted[q] WHEN s."kind" = 'capture' THEN s."units" END;
        "released_units" := CASE
          WHEN q IS NOT NULL THEN al_released[q] + CASE WHEN s."kind" = 'void' THEN s."units" ELSE 0 END
          WHEN s."kind" = 'capture' THEN p."units" - s."units" WHEN s."kind" = 'void' THEN p."units" ELSE 0 END;
        "expires_at" := p."expires_at"; "created_at" := p."created_at"; "settled_at" := s."created_at";
      END IF;
      IF k IS NOT NULL THEN
        r := op_rows[k];
        IF r."kind" <> p_kind[i] OR r."request_hash" <> p_request_hash[i] THEN
          "outcome" := 'conflict';
        ELSE
          -- A stored movement of the same kind and parameters is of this hold (the hash names it).
          "outcome" := 'replayed'; "transfer_id" := r."id"; "available" := r."available_after"; "held" := r."held_after";
          IF r."kind" IN ('post', 'release') THEN
            -- The allotment as it stood right after it (still open then).
            IF r."seq" IS NULL THEN
              -- One of this batch's own: the totals now, less what the batch did to them since.
              v_captured := al_posted[q];
              v_released := al_released[q];
              FOR m IN REVERSE cardinality(new_rows) .. 1 LOOP
                EXIT WHEN new_rows[m]."id" = r."id";
                IF new_rows[m]."hold_id" = r."hold_id" THEN
                  v_captured := v_captured - CASE WHEN new_rows[m]."kind" = 'post' THEN new_rows[m]."units" ELSE 0 END;
                  v_released := v_released - CASE WHEN new_rows[m]."kind" = 'release' THEN new_rows[m]."units" ELSE 0 END;
                END IF;
              END LOOP;
            ELSE
              SELECT coalesce(sum(t."units") FILTER (WHERE t."kind" = 'post'), 0), coalesce(sum(t."units") FILTER (WHERE t."kind" = 'release'), 0)
              INTO v_captured, v_released
              FROM "transfers" t WHERE t."hold_id" = r."hold_id" AND t."kind" IN ('post', 'release') AND t."seq" <= r."seq";
            END IF;
            "status" := 'open'; "captured_units" := v_captured; "released_units" := v_released; "settled_at" := NULL;
          END IF;
        END IF;
        RETURN NEXT;
        CONTINUE;
      END IF;
      "outcome" := CASE
        WHEN p."id" IS NULL THEN 'not_found'
        WHEN p_kind[i] IN ('post', 'release') AND q IS NULL THEN 'not_allotment'
        WHEN s."id" IS NOT NULL THEN 'settled'
        WHEN p_kind[i] = 'capture' AND q IS NOT NULL THEN 'allotment_capture'
      END;
      IF "outcome" IS NOT NULL THEN
        RETURN NEXT;
        CONTINUE;
      END IF;
      j := array_position(a_ids, p."tenant_id");
      IF j IS NULL THEN
        RAISE EXCEPTION 'ledger_apply: the account of hold % was not locked', p."hold_id";
      END IF;
      IF p_kind[i] IN ('post', 'release') THEN
        v_units := p_units[i];
        IF v_units IS NULL OR v_units <= 0 OR al_posted[q] + al_released[q] + v_units > al_units[q] THEN
          "outcome" := 'over_hold';
          RETURN NEXT;
          CONTINUE;
        END IF;
        a_held[j] := a_held[j] - v_units;
        IF p_kind[i] = 'post' THEN
          a_posted[j] := a_posted[j] + v_units;
          al_posted[q] := al_posted[q] + v_units;
        ELSE
          a_available[j] := a_available[j] + v_units;
          al_released[q] := al_released[q] + v_units;
        END IF;
        a_changed[j] := true;
        al_changed[q] := true;
        r := "ledger_transfer"(p_transfer_id[i], p_operation_id[i], p_request_hash[i], p_kind[i], p."tenant_id", v_units, p."hold_id",
          p_reason[i], a_available[j], a_held[j], v_now, NULL, NULL, 'held',
          CASE WHEN p_kind[i] = 'post' THEN 'revenue' ELSE 'available' END, p_event_id[i], p_request_id[i]);
        new_rows := new_rows || r;
        ops := ops || r."operation_id";
        op_rows := op_rows || r;
        "outcome" := 'ok'; "transfer_id" := r."id"; "available" := r."available_after"; "held" := r."held_after";
        "captured_units" := al_posted[q]; "released_units" := al_released[q];
        RETURN NEXT;
        CONTINUE;
      END IF;
      -- Capture or void: the second phase. A void of an allotment settles what is left of it.
      IF q IS NOT NULL THEN
        v_units := al_units[q] - al_posted[q] - al_released[q];
        a_available[j] := a_available[j] + v_units;
        a_held[j] := a_held[j] - v_units;
        al_closed[q] := true;
        al_changed[q] := true;
        r := "ledger_transfer"(p_transfer_id[i], p_operation_id[i], p_request_hash[i], 'void', p."tenant_id", v_units, p."hold_id",
          p_reason[i], a_available[j], a_held[j], v_now, v_units, NULL, 'held', 'available', p_event_id[i], p_request_id[i]);
        "captured_units" := al_posted[q]; "released_units" := al_released[q] + v_units;
      ELSE
        v_captured := CASE WHEN p_kind[i] = 'capture' THEN p_units[i] ELSE 0 END;
        IF v_captured IS NULL OR v_captured < 0 OR v_captured > p."units" THEN
          "outcome" := 'over_hold';
          RETURN NEXT;
          CONTINUE;
        END IF;
        v_released := p."units" - v_captured;
        a_available[j] := a_available[j] + v_released;
        a_held[j] := a_held[j] - p."units";
        a_posted[j] := a_posted[j] + v_captured;
        v_units := CASE WHEN p_kind[i] = 'capture' THEN v_captured ELSE v_released END;
        r := "ledger_transfer"(p_transfer_id[i], p_operation_id[i], p_request_hash[i], p_kind[i], p."tenant_id", v_units, p."hold_id",
          p_reason[i], a_available[j], a_held[j], v_now, p."units", NULL, 'held',
          CASE WHEN p_kind[i] = 'capture' THEN 'revenue' ELSE 'available' END, p_event_id[i], p_request_id[i]);
        "captured_units" := CASE WHEN p_kind[i] = 'capture' THEN v_captured END; "released_units" := v_released;
      END IF;
      a_changed[j] := true;
      new_rows := new_rows || r;
      ops := ops || r."operation_id";
      op_rows := op_rows || r;
      settle_ids := settle_ids || r."hold_id";
      settle_rows := settle_rows || r;
      "outcome" := 'ok'; "transfer_id" := r."id"; "available" := r."available_after"; "held" := r."held_after";
      "status" := CASE WHEN p_kind[i] = 'capture' THEN 'captured' ELSE 'voided' END; "settled_at" := v_now;
      RETURN NEXT;
    ELSE
      RAISE EXCEPTION 'ledger_apply: unknown kind %', p_kind[i];
    END IF;
  END LOOP;

  IF array_length(new_rows, 1) > 0 THEN
    UPDATE "accounts" a SET "available" = u."available", "held" = u."held", "debits_pending" = u."held", "debits_posted" = u."posted", "updated_at" = v_now
    FROM unnest(a_ids, a_available, a_held, a_posted, a_changed) AS u ("tenant_id", "available", "held", "posted", "changed")
    WHERE a."tenant_id" = u."tenant_id" AND u."changed";
    -- The allotments' totals before the transfers: the settlement trigger reads them.
    IF cardinality(al_ids) > 0 THEN
      INSERT INTO "allotments" ("hold_id", "tenant_id", "units", "posted", "released", "created_at", "updated_at", "closed_at")
      SELECT u."hold_id", u."tenant_id", u."units", u."posted", u."released", v_now, v_now, CASE WHEN u."closed" THEN v_now END
      FROM unnest(al_ids, al_tenant, al_units, al_posted, al_released, al_new, al_closed) AS u ("hold_id", "tenant_id", "units", "posted", "released", "new", "closed")
      WHERE u."new";
      UPDATE "allotments" a SET "posted" = u."posted", "released" = u."released", "updated_at" = v_now,
        "closed_at" = CASE WHEN u."closed" THEN v_now ELSE a."closed_at" END
      FROM unnest(al_ids, al_posted, al_released, al_changed, al_new, al_closed) AS u ("hold_id", "posted", "released", "changed", "new", "closed")
      WHERE a."hold_id" = u."hold_id" AND u."changed" AND NOT u."new";
    END IF;
    PERFORM "ledger_append"(new_rows);
  END IF;
END;
$$;
