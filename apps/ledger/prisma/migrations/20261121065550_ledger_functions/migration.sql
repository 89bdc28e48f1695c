-- Every movement as one PL/pgSQL function: one round trip (an autocommit
-- statement) instead of an interactive transaction of nine (docs/benchmarks/ledger.md).
-- Each function locks the row every competing call must lock (the tenant's
-- account, or the hold), then: a retry of a stored operation returns its stored
-- result; an expected refusal returns an outcome and writes nothing; otherwise it
-- moves the balances, writes the transfer, its legs and the outbox event.
-- Outcomes: ok, replayed, conflict, insufficient_balance, not_found, settled,
-- over_hold, invalid_expiry. The TypeScript callers (src/domain) turn refusals
-- into AppErrors; event payloads follow @gateway/events' catalog (tests check them).

CREATE FUNCTION "ledger_credit"(
  p_operation_id TEXT, p_request_hash TEXT, p_tenant_id TEXT, p_units BIGINT, p_reason TEXT,
  p_transfer_id TEXT, p_event_id TEXT, p_request_id TEXT
) RETURNS TABLE ("outcome" TEXT, "transfer_id" TEXT, "available" BIGINT, "held" BIGINT)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
  prior "transfers"%ROWTYPE;
  v_available BIGINT;
  v_held BIGINT;
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

  UPDATE "accounts" SET "available" = "available" + p_units, "updated_at" = now()
  WHERE "tenant_id" = p_tenant_id RETURNING "available", "held" INTO v_available, v_held;
  INSERT INTO "transfers" ("id", "operation_id", "request_hash", "kind", "tenant_id", "units", "reason", "available_after", "held_after")
  VALUES (p_transfer_id, p_operation_id, p_request_hash, 'credit', p_tenant_id, p_units, p_reason, v_available, v_held);
  INSERT INTO "entries" ("transfer_id", "leg", "account", "units")
  VALUES (p_transfer_id, 0, 'funding', -p_units), (p_transfer_id, 1, 'available', p_units);
  INSERT INTO "outbox_events" ("id", "type", "payload", "request_id")
  VALUES (p_event_id, 'ledger.credited', jsonb_build_object(
    'tenant_id', p_tenant_id, 'entry_id', p_transfer_id, 'operation_id', p_operation_id,
    'units', p_units::TEXT, 'available_units', v_available::TEXT, 'reason', p_reason), p_request_id);
  RETURN QUERY SELECT 'ok', p_transfer_id, v_available, v_held;
END;
$$;

CREATE FUNCTION "ledger_reserve"(
  p_operation_id TEXT, p_request_hash TEXT, p_tenant_id TEXT, p_units BIGINT,
  p_expires_at TIMESTAMPTZ, p_ttl_seconds INTEGER, p_reason TEXT,
  p_hold_id TEXT, p_transfer_id TEXT, p_event_id TEXT, p_request_id TEXT
) RETURNS TABLE ("outcome" TEXT, "hold_id" TEXT, "transfer_id" TEXT, "units" BIGINT, "expires_at" TIMESTAMPTZ, "available" BIGINT, "held" BIGINT)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
  prior "transfers"%ROWTYPE;
  v_available BIGINT;
  v_held BIGINT;
  v_expires TIMESTAMPTZ;
BEGIN
  -- Every movement of the tenant queues on this lock, duplicates of this call included.
  SELECT "available" INTO v_available FROM "accounts" WHERE "tenant_id" = p_tenant_id FOR NO KEY UPDATE;
  SELECT * INTO prior FROM "transfers" WHERE "operation_id" = p_operation_id;
  IF prior."id" IS NOT NULL THEN
    IF prior."kind" <> 'reserve' OR prior."request_hash" <> p_request_hash THEN
      RETURN QUERY SELECT 'conflict', NULL::TEXT, NULL::TEXT, NULL::BIGINT, NULL::TIMESTAMPTZ, NULL::BIGINT, NULL::BIGINT;
    ELSE
      RETURN QUERY SELECT 'replayed', h."id", prior."id", h."units", h."expires_at", prior."available_after", prior."held_after"
      FROM "holds" h WHERE h."id" = prior."hold_id";
    END IF;
    RETURN;
  END IF;
  IF v_available IS NULL OR v_available < p_units THEN
    RETURN QUERY SELECT 'insufficient_balance', NULL::TEXT, NULL::TEXT, NULL::BIGINT, NULL::TIMESTAMPTZ, NULL::BIGINT, NULL::BIGINT;
    RETURN;
  END IF;
  v_expires := COALESCE(p_expires_at, now() + make_interval(secs => p_ttl_seconds));
  IF v_expires <= now() OR v_expires > now() + INTERVAL '365 days' THEN
    RETURN QUERY SELECT 'invalid_expiry', NULL::TEXT, NULL::TEXT, NULL::BIGINT, NULL::TIMESTAMPTZ, NULL::BIGINT, NULL::BIGINT;
    RETURN;
  END IF;

  UPDATE "accounts" SET "available" = "available" - p_units, "held" = "held" + p_units, "updated_at" = now()
  WHERE "tenant_id" = p_tenant_id RETURNING "available", "held" INTO v_available, v_held;
  INSERT INTO "holds" ("id", "tenant_id", "units", "status", "expires_at")
  VALUES (p_hold_id, p_tenant_id, p_units, 'open', v_expires) RETURNING "expires_at" INTO v_expires;
  INSERT INTO "transfers" ("id", "operation_id", "request_hash", "kind", "tenant_id", "units", "hold_id", "reason", "available_after", "held_after")
  VALUES (p_transfer_id, p_operation_id, p_request_hash, 'reserve', p_tenant_id, p_units, p_hold_id, p_reason, v_available, v_held);
  INSERT INTO "entries" ("transfer_id", "leg", "account", "units")
  VALUES (p_transfer_id, 0, 'available', -p_units), (p_transfer_id, 1, 'held', p_units);
  INSERT INTO "outbox_events" ("id", "type", "payload", "request_id")
  VALUES (p_event_id, 'ledger.reserved', jsonb_build_object(
    'tenant_id', p_tenant_id, 'hold_id', p_hold_id, 'entry_id', p_transfer_id, 'operation_id', p_operation_id,
    'units', p_units::TEXT, 'expires_at', to_char(v_expires AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    'available_units', v_available::TEXT, 'reserved_units', v_held::TEXT), p_request_id);
  RETURN QUERY SELECT 'ok', p_hold_id, p_transfer_id, p_units, v_expires, v_available, v_held;
END;
$$;

-- Capture (p_kind 'capture', p_units = the charge) and void (p_kind 'void', p_units NULL).
CREATE FUNCTION "ledger_settle"(
  p_kind TEXT, p_operation_id TEXT, p_request_hash TEXT, p_hold_id TEXT, p_units BIGINT, p_reason TEXT,
  p_transfer_id TEXT, p_event_id TEXT, p_request_id TEXT
) RETURNS TABLE (
  "outcome" TEXT, "transfer_id" TEXT, "available" BIGINT, "held" BIGINT,
  "id" TEXT, "tenant_id" TEXT, "units" BIGINT, "status" TEXT, "captured_units" BIGINT,
  "expires_at" TIMESTAMPTZ, "created_at" TIMESTAMPTZ, "settled_at" TIMESTAMPTZ
)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
  h "holds"%ROWTYPE;
  prior "transfers"%ROWTYPE;
  v_captured BIGINT;
  v_released BIGINT;
  v_available BIGINT;
  v_held BIGINT;
BEGIN
  IF p_kind NOT IN ('capture', 'void') THEN
    RAISE EXCEPTION 'ledger_settle: unknown kind %', p_kind;
  END IF;
  -- Every settlement of this hold queues on this lock, duplicates of this call included.
  SELECT * INTO h FROM "holds" WHERE "id" = p_hold_id FOR NO KEY UPDATE;
  SELECT * INTO prior FROM "transfers" WHERE "operation_id" = p_operation_id;
  IF prior."id" IS NOT NULL THEN
    IF prior."kind" <> p_kind OR prior."request_hash" <> p_request_hash THEN
      RETURN QUERY SELECT 'conflict', NULL::TEXT, NULL::BIGINT, NULL::BIGINT, h."id", h."tenant_id", h."units", h."status", h."captured_units", h."expires_at", h."created_at", h."settled_at";
    ELSE
      RETURN QUERY SELECT 'replayed', prior."id", prior."available_after", prior."held_after", h."id", h."tenant_id", h."units", h."status", h."captured_units", h."expires_at", h."created_at", h."settled_at";
    END IF;
    RETURN;
  END IF;
  IF h."id" IS NULL OR h."status" <> 'open' THEN
    RETURN QUERY SELECT CASE WHEN h."id" IS NULL THEN 'not_found' ELSE 'settled' END, NULL::TEXT, NULL::BIGINT, NULL::BIGINT,
      h."id", h."tenant_id", h."units", h."status", h."captured_units", h."expires_at", h."created_at", h."settled_at";
    RETURN;
  END IF;
  v_captured := CASE WHEN p_kind = 'capture' THEN p_units ELSE 0 END;
  IF v_captured IS NULL OR v_captured < 0 OR v_captured > h."units" THEN
    RETURN QUERY SELECT 'over_hold', NULL::TEXT, NULL::BIGINT, NULL::BIGINT,
      h."id", h."tenant_id", h."units", h."status", h."captured_units", h."expires_at", h."created_at", h."settled_at";
    RETURN;
  END IF;
  v_released := h."units" - v_captured;

  UPDATE "accounts" SET "available" = "available" + v_released, "held" = "held" - h."units", "updated_at" = now()
  WHERE "tenant_id" = h."tenant_id" RETURNING "available", "held" INTO v_available, v_held;
  INSERT INTO "transfers" ("id", "operation_id", "request_hash", "kind", "tenant_id", "units", "hold_id", "reason", "available_after", "held_after")
  VALUES (p_transfer_id, p_operation_id, p_request_hash, p_kind, h."tenant_id",
          CASE WHEN p_kind = 'capture' THEN v_captured ELSE v_released END, h."id", p_reason, v_available, v_held);
  INSERT INTO "entries" ("transfer_id", "leg", "account", "units")
  SELECT p_transfer_id, (row_number() OVER (ORDER BY legs.ord) - 1)::SMALLINT, legs.account, legs.units
  FROM (VALUES (1, 'held', -h."units"), (2, 'revenue', v_captured), (3, 'available', v_released)) AS legs (ord, account, units)
  WHERE legs.units <> 0;
  UPDATE "holds" SET "status" = CASE WHEN p_kind = 'capture' THEN 'captured' ELSE 'voided' END,
    "captured_units" = CASE WHEN p_kind = 'capture' THEN v_captured END,
    "settled_by" = p_transfer_id, "settled_at" = now()
  WHERE "id" = h."id" RETURNING * INTO h;
  INSERT INTO "outbox_events" ("id", "type", "payload", "request_id")
  VALUES (p_event_id,
    CASE WHEN p_kind = 'capture' THEN 'ledger.captured' ELSE 'ledger.voided' END,
    jsonb_build_object(
      'tenant_id', h."tenant_id", 'hold_id', h."id", 'entry_id', p_transfer_id, 'operation_id', p_operation_id,
      'released_units', v_released::TEXT, 'available_units', v_available::TEXT, 'reserved_units', v_held::TEXT)
    || CASE WHEN p_kind = 'capture' THEN jsonb_build_object('units', v_captured::TEXT) ELSE '{}'::JSONB END,
    p_request_id);
  RETURN QUERY SELECT 'ok', p_transfer_id, v_available, v_held,
    h."id", h."tenant_id", h."units", h."status", h."captured_units", h."expires_at", h."created_at", h."settled_at";
END;
$$;
