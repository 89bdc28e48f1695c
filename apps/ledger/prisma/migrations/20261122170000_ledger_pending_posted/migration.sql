-- Pending/posted transfers (docs/decisions/0160), after TigerBeetle's two-phase transfers.
--
-- A movement is ONE append-only row of `transfers`: a reserve is a pending transfer
-- (its hold_id is the pending id), a capture or void is one more row naming it
-- (hold_id, pending_units = the hold's units). Holds and journal legs are no longer
-- written: `holds` and `entries` become views over `transfers`. An account's
-- balances (debits_pending, debits_posted, credits_pending, credits_posted, and the
-- derived available/held the API shows) change once per group-committed batch.
-- The rows of `transfers` are also the ledger's events: `seq` is assigned under a
-- transaction-level advisory lock taken right before the batch's insert and held
-- to its commit, so seq order is commit order and the relay can tail it with a
-- checkpoint (`relay_checkpoints`) instead of inserting and deleting outbox rows.
--
-- Written by hand: existing data is converted in place, balances preserved exactly.

-- 1. Accounts carry TigerBeetle's four balances; available and held stay (the API's),
--    tied to them by CHECK constraints.
ALTER TABLE "accounts"
  ADD COLUMN "debits_pending" BIGINT NOT NULL DEFAULT 0,
  ADD COLUMN "debits_posted" BIGINT NOT NULL DEFAULT 0,
  ADD COLUMN "credits_pending" BIGINT NOT NULL DEFAULT 0,
  ADD COLUMN "credits_posted" BIGINT NOT NULL DEFAULT 0;
-- Existing balances are kept as they are: pending = held, credits posted = what was
-- credited, debits posted = whatever makes available come out unchanged (the captures).
UPDATE "accounts" a SET
  "debits_pending" = a."held",
  "credits_posted" = c."credits",
  "debits_posted" = c."credits" - a."available" - a."held"
FROM (
  SELECT a2."tenant_id", coalesce((SELECT sum(t."units") FROM "transfers" t WHERE t."tenant_id" = a2."tenant_id" AND t."kind" = 'credit'), 0) AS "credits"
  FROM "accounts" a2
) c
WHERE c."tenant_id" = a."tenant_id";
ALTER TABLE "accounts"
  ADD CONSTRAINT "accounts_tb_nonnegative" CHECK ("debits_pending" >= 0 AND "debits_posted" >= 0 AND "credits_pending" >= 0 AND "credits_posted" >= 0),
  ADD CONSTRAINT "accounts_tb_derived" CHECK ("held" = "debits_pending" AND "available" = "credits_posted" - "debits_posted" - "debits_pending");

-- 2. Transfers take what holds and entries held: the pending transfer's expiry, the
--    pending amount a settlement names, the two accounts of the transfer, the event id
--    and request id (the row is the event).
ALTER TABLE "transfers" DISABLE TRIGGER "transfers_append_only";
ALTER TABLE "transfers"
  ADD COLUMN "pending_units" BIGINT,
  ADD COLUMN "expires_at" TIMESTAMPTZ(3),
  ADD COLUMN "debit_account" TEXT,
  ADD COLUMN "credit_account" TEXT,
  ADD COLUMN "event_id" TEXT,
  ADD COLUMN "request_id" TEXT;
UPDATE "transfers" t SET "expires_at" = h."expires_at"
FROM "holds" h WHERE t."kind" = 'reserve' AND h."id" = t."hold_id";
UPDATE "transfers" t SET "pending_units" = h."units"
FROM "holds" h WHERE t."kind" IN ('capture', 'void') AND h."id" = t."hold_id";
UPDATE "transfers" SET
  "debit_account" = CASE "kind" WHEN 'credit' THEN 'funding' WHEN 'reserve' THEN 'available' ELSE 'held' END,
  "credit_account" = CASE "kind" WHEN 'credit' THEN 'available' WHEN 'reserve' THEN 'held' WHEN 'capture' THEN 'revenue' ELSE 'available' END,
  "event_id" = 'evt_' || "id";
ALTER TABLE "transfers" ENABLE TRIGGER "transfers_append_only";

-- The journal as stored must be exactly the journal the view will derive; refuse to
-- migrate otherwise (nothing is lost silently).
DO $$
DECLARE
  bad BIGINT;
BEGIN
  WITH derived AS (
    SELECT t."id" AS "transfer_id", l."account", l."units"
    FROM "transfers" t
    CROSS JOIN LATERAL (VALUES
      (1, t."debit_account", -coalesce(t."pending_units", t."units")),
      (2, t."credit_account", t."units"),
      (3, 'available', coalesce(t."pending_units", t."units") - t."units")
    ) AS l ("ord", "account", "units")
    WHERE l."units" <> 0
  ),
  stored AS (SELECT "transfer_id", "account", "units" FROM "entries")
  SELECT count(*) INTO bad FROM (
    (SELECT * FROM derived EXCEPT ALL SELECT * FROM stored)
    UNION ALL
    (SELECT * FROM stored EXCEPT ALL SELECT * FROM derived)
  ) d;
  IF bad <> 0 THEN
    RAISE EXCEPTION 'ledger migration: % journal legs differ from their transfers; not converting', bad;
  END IF;
  SELECT count(*) INTO bad FROM "holds" h
  WHERE NOT EXISTS (SELECT 1 FROM "transfers" r WHERE r."kind" = 'reserve' AND r."hold_id" = h."id" AND r."units" = h."units" AND r."tenant_id" = h."tenant_id")
     OR (h."status" <> 'open') <> EXISTS (SELECT 1 FROM "transfers" s WHERE s."kind" IN ('capture', 'void') AND s."hold_id" = h."id");
  IF bad <> 0 THEN
    RAISE EXCEPTION 'ledger migration: % holds do not match their transfers; not converting', bad;
  END IF;
END;
$$;

-- Holds and legs become views; their tables go.
ALTER TABLE "transfers" DROP CONSTRAINT "transfers_hold_id_fkey";
ALTER TABLE "holds" DROP CONSTRAINT "holds_settled_by_fkey";
DROP TABLE "holds";
DROP TABLE "entries";
DROP FUNCTION "ledger_hold_settles_once"();
DROP FUNCTION "ledger_transfer_balances"();

ALTER TABLE "transfers"
  ALTER COLUMN "debit_account" SET NOT NULL,
  ALTER COLUMN "credit_account" SET NOT NULL,
  ALTER COLUMN "event_id" SET NOT NULL,
  ADD CONSTRAINT "transfers_accounts_valid" CHECK (
    ("kind" = 'credit' AND "debit_account" = 'funding' AND "credit_account" = 'available') OR
    ("kind" = 'reserve' AND "debit_account" = 'available' AND "credit_account" = 'held') OR
    ("kind" = 'capture' AND "debit_account" = 'held' AND "credit_account" = 'revenue') OR
    ("kind" = 'void' AND "debit_account" = 'held' AND "credit_account" = 'available')),
  ADD CONSTRAINT "transfers_pending_valid" CHECK (
    CASE "kind"
      WHEN 'reserve' THEN "pending_units" IS NULL AND "expires_at" IS NOT NULL AND "units" > 0
      WHEN 'capture' THEN "pending_units" IS NOT NULL AND "expires_at" IS NULL AND "units" <= "pending_units"
      WHEN 'void' THEN "pending_units" IS NOT NULL AND "expires_at" IS NULL AND "units" = "pending_units"
      ELSE "pending_units" IS NULL AND "expires_at" IS NULL
    END);

-- seq: assigned by the movement functions (max + 1 under the advisory lock), not by a
-- sequence, so that it is gap-free and in commit order.
ALTER TABLE "transfers" ALTER COLUMN "seq" DROP DEFAULT;
DROP SEQUENCE IF EXISTS "transfers_seq_seq";
CREATE UNIQUE INDEX "transfers_seq_key" ON "transfers"("seq");
CREATE UNIQUE INDEX "transfers_event_id_key" ON "transfers"("event_id");
-- One pending transfer per hold id, and at most one settlement of it: a hold is
-- captured or voided exactly once, whatever the code above does.
CREATE UNIQUE INDEX "transfers_pending_key" ON "transfers"("hold_id") WHERE "kind" = 'reserve';
CREATE UNIQUE INDEX "transfers_settlement_key" ON "transfers"("hold_id") WHERE "kind" IN ('capture', 'void');

CREATE VIEW "holds" AS
SELECT r."hold_id" AS "id", r."tenant_id", r."units",
       CASE s."kind" WHEN 'capture' THEN 'captured' WHEN 'void' THEN 'voided' ELSE 'open' END AS "status",
       CASE WHEN s."kind" = 'capture' THEN s."units" END AS "captured_units",
       r."expires_at", s."id" AS "settled_by", r."created_at", s."created_at" AS "settled_at"
FROM "transfers" r
LEFT JOIN "transfers" s ON s."hold_id" = r."hold_id" AND s."kind" IN ('capture', 'void')
WHERE r."kind" = 'reserve';

-- The legs of every transfer: the debit account gives the pending amount (or the
-- amount), the credit account takes the amount, and a capture below its hold
-- returns the rest to available. Zero legs are left out. They sum to zero.
CREATE VIEW "entries" AS
SELECT t."id" AS "transfer_id", (row_number() OVER (PARTITION BY t."id" ORDER BY l."ord") - 1)::SMALLINT AS "leg", l."account", l."units"
FROM "transfers" t
CROSS JOIN LATERAL (VALUES
  (1, t."debit_account", -coalesce(t."pending_units", t."units")),
  (2, t."credit_account", t."units"),
  (3, 'available', coalesce(t."pending_units", t."units") - t."units")
) AS l ("ord", "account", "units")
WHERE l."units" <> 0;

-- The ledger's events, one per transfer, with the catalog's payloads (as the outbox
-- rows of the former functions had them).
CREATE VIEW "ledger_events" AS
SELECT t."seq", t."event_id" AS "id",
       'ledger.' || CASE t."kind" WHEN 'credit' THEN 'credited' WHEN 'reserve' THEN 'reserved' WHEN 'capture' THEN 'captured' ELSE 'voided' END AS "type",
       CASE t."kind"
         WHEN 'credit' THEN jsonb_build_object('tenant_id', t."tenant_id", 'entry_id', t."id", 'operation_id', t."operation_id",
           'units', t."units"::TEXT, 'available_units', t."available_after"::TEXT, 'reason', t."reason")
         WHEN 'reserve' THEN jsonb_build_object('tenant_id', t."tenant_id", 'hold_id', t."hold_id", 'entry_id', t."id", 'operation_id', t."operation_id",
           'units', t."units"::TEXT, 'expires_at', to_char(t."expires_at" AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
           'available_units', t."available_after"::TEXT, 'reserved_units', t."held_after"::TEXT)
         ELSE jsonb_build_object('tenant_id', t."tenant_id", 'hold_id', t."hold_id", 'entry_id', t."id", 'operation_id', t."operation_id",
           'released_units', (t."pending_units" - CASE WHEN t."kind" = 'capture' THEN t."units" ELSE 0 END)::TEXT,
           'available_units', t."available_after"::TEXT, 'reserved_units', t."held_after"::TEXT)
           || CASE WHEN t."kind" = 'capture' THEN jsonb_build_object('units', t."units"::TEXT) ELSE '{}'::JSONB END
       END AS "payload",
       t."request_id", t."created_at"
FROM "transfers" t;

-- Second line of defence: every settlement names a pending transfer of the same tenant,
-- before it, for exactly its units. A row trigger that fires for settlements only, at
-- the end of the statement (so a batch's own pending transfers count): one index lookup
-- each. (A statement trigger over a transition table cost about 190 µs of PostgreSQL CPU
-- per reserve + capture at 16 movements per batch: its queries are planned every time.)
CREATE FUNCTION "ledger_settlement_valid"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NOT EXISTS (
    SELECT 1 FROM "transfers" r
    WHERE r."kind" = 'reserve' AND r."hold_id" = NEW."hold_id" AND r."tenant_id" = NEW."tenant_id" AND r."units" = NEW."pending_units" AND r."seq" < NEW."seq"
  ) THEN
    RAISE EXCEPTION 'ledger: settlement % does not match its pending transfer %', NEW."id", NEW."hold_id" USING ERRCODE = 'check_violation';
  END IF;
  RETURN NULL;
END;
$$;
CREATE TRIGGER "transfers_settlement_valid" AFTER INSERT ON "transfers"
FOR EACH ROW WHEN (NEW."kind" IN ('capture', 'void')) EXECUTE FUNCTION "ledger_settlement_valid"();

-- 3. Where a relay that tails a log has got to (also used by other tailing relays).
CREATE TABLE "relay_checkpoints" (
    "name" TEXT NOT NULL,
    "position" BIGINT NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "relay_checkpoints_pkey" PRIMARY KEY ("name")
);
-- Everything before this migration went through the outbox (published, or still in
-- outbox_events, which the outbox relay keeps draining): the tail starts after it.
INSERT INTO "relay_checkpoints" ("name", "position") SELECT 'ledger_events', coalesce(max("seq"), 0) FROM "transfers";

-- 4. The movement functions, rewritten.
DROP FUNCTION "ledger_apply"(TEXT[], TEXT[], TEXT[], TEXT[], TEXT[], BIGINT[], TIMESTAMPTZ[], INTEGER[], TEXT[], TEXT[], TEXT[], TEXT[], TEXT[]);
DROP FUNCTION "ledger_reserve"(TEXT, TEXT, TEXT, BIGINT, TIMESTAMPTZ, INTEGER, TEXT, TEXT, TEXT, TEXT, TEXT);
DROP FUNCTION "ledger_settle"(TEXT, TEXT, TEXT, TEXT, BIGINT, TEXT, TEXT, TEXT, TEXT);
DROP FUNCTION "ledger_credit"(TEXT, TEXT, TEXT, BIGINT, TEXT, TEXT, TEXT, TEXT);

-- Appends a batch's transfers in commit order: the advisory lock (per database) is
-- taken last, after every account lock, and held until commit, so the next batch
-- numbers its rows only after this one is visible.
CREATE FUNCTION "ledger_append"(p_rows "transfers"[]) RETURNS VOID LANGUAGE plpgsql AS $$
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

-- One transfer row, by column name (independent of the table's column order).
CREATE FUNCTION "ledger_transfer"(
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

-- Group commit (decision 0011, now with one row per movement): locks every account the
-- batch touches in tenant_id order, reads every stored operation and hold the batch
-- names in three statements, decides each movement in order on the running balances
-- (in variables), then writes once: one UPDATE of the touched accounts and one INSERT
-- of the new transfers. Outcomes and columns as before.
CREATE FUNCTION "ledger_apply"(
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
          RETURN QUERY SELECT i, 'conflict', NULL::TEXT, NULL::BIGINT, NULL::BIGINT, NULL::TEXT, NULL::TEXT, NULL::TEXT, NULL::BIGINT, NULL::TEXT, NULL::BIGINT, NULL::TIMESTAMPTZ, NULL::TIMESTAMPTZ, NULL::TIMESTAMPTZ;
        ELSE
          RETURN QUERY SELECT i, 'replayed', r."id", r."available_after", r."held_after", r."hold_id", NULL::TEXT, NULL::TEXT, r."units", NULL::TEXT, NULL::BIGINT, r."expires_at"::TIMESTAMPTZ, NULL::TIMESTAMPTZ, NULL::TIMESTAMPTZ;
        END IF;
        CONTINUE;
      END IF;
      j := array_position(a_ids, p_tenant_id[i]);
      IF j IS NULL OR a_available[j] < p_units[i] THEN
        RETURN QUERY SELECT i, 'insufficient_balance', NULL::TEXT, NULL::BIGINT, NULL::BIGINT, NULL::TEXT, NULL::TEXT, NULL::TEXT, NULL::BIGINT, NULL::TEXT, NULL::BIGINT, NULL::TIMESTAMPTZ, NULL::TIMESTAMPTZ, NULL::TIMESTAMPTZ;
        CONTINUE;
      END IF;
      v_expires := coalesce(p_expires_at[i], now() + make_interval(secs => p_ttl_seconds[i]));
      IF v_expires <= now() OR v_expires > now() + INTERVAL '365 days' THEN
        RETURN QUERY SELECT i, 'invalid_expiry', NULL::TEXT, NULL::BIGINT, NULL::BIGINT, NULL::TEXT, NULL::TEXT, NULL::TEXT, NULL::BIGINT, NULL::TEXT, NULL::BIGINT, NULL::TIMESTAMPTZ, NULL::TIMESTAMPTZ, NULL::TIMESTAMPTZ;
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
      RETURN QUERY SELECT i, 'ok', r."id", r."available_after", r."held_after", r."hold_id", NULL::TEXT, NULL::TEXT, r."units", NULL::TEXT, NULL::BIGINT, r."expires_at"::TIMESTAMPTZ, NULL::TIMESTAMPTZ, NULL::TIMESTAMPTZ;
    ELSIF p_kind[i] IN ('capture', 'void') THEN
      j := array_position(pend_ids, p_hold_id[i]);
      p := CASE WHEN j IS NULL THEN NULL ELSE pend_rows[j] END;
      j := array_position(settle_ids, p_hold_id[i]);
      s := CASE WHEN j IS NULL THEN NULL ELSE settle_rows[j] END;
      IF k IS NOT NULL THEN
        r := op_rows[k];
        IF r."kind" <> p_kind[i] OR r."request_hash" <> p_request_hash[i] THEN
          RETURN QUERY SELECT i, 'conflict', NULL::TEXT, NULL::BIGINT, NULL::BIGINT, NULL::TEXT,
            p."hold_id", p."tenant_id", p."units", CASE s."kind" WHEN 'capture' THEN 'captured' WHEN 'void' THEN 'voided' ELSE CASE WHEN p."id" IS NULL THEN NULL ELSE 'open' END END,
            CASE WHEN s."kind" = 'capture' THEN s."units" END, p."expires_at"::TIMESTAMPTZ, p."created_at"::TIMESTAMPTZ, s."created_at"::TIMESTAMPTZ;
        ELSE
          -- A stored settlement of the same kind and parameters is of this hold (the hash names it).
          RETURN QUERY SELECT i, 'replayed', r."id", r."available_after", r."held_after", NULL::TEXT,
            p."hold_id", p."tenant_id", p."units", CASE s."kind" WHEN 'capture' THEN 'captured' WHEN 'void' THEN 'voided' ELSE 'open' END,
            CASE WHEN s."kind" = 'capture' THEN s."units" END, p."expires_at"::TIMESTAMPTZ, p."created_at"::TIMESTAMPTZ, s."created_at"::TIMESTAMPTZ;
        END IF;
        CONTINUE;
      END IF;
      IF p."id" IS NULL OR s."id" IS NOT NULL THEN
        RETURN QUERY SELECT i, CASE WHEN p."id" IS NULL THEN 'not_found' ELSE 'settled' END, NULL::TEXT, NULL::BIGINT, NULL::BIGINT, NULL::TEXT,
          p."hold_id", p."tenant_id", p."units", CASE s."kind" WHEN 'capture' THEN 'captured' WHEN 'void' THEN 'voided' ELSE CASE WHEN p."id" IS NULL THEN NULL ELSE 'open' END END,
          CASE WHEN s."kind" = 'capture' THEN s."units" END, p."expires_at"::TIMESTAMPTZ, p."created_at"::TIMESTAMPTZ, s."created_at"::TIMESTAMPTZ;
        CONTINUE;
      END IF;
      v_captured := CASE WHEN p_kind[i] = 'capture' THEN p_units[i] ELSE 0 END;
      IF v_captured IS NULL OR v_captured < 0 OR v_captured > p."units" THEN
        RETURN QUERY SELECT i, 'over_hold', NULL::TEXT, NULL::BIGINT, NULL::BIGINT, NULL::TEXT,
          p."hold_id", p."tenant_id", p."units", 'open', NULL::BIGINT, p."expires_at"::TIMESTAMPTZ, p."created_at"::TIMESTAMPTZ, NULL::TIMESTAMPTZ;
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
      RETURN QUERY SELECT i, 'ok', r."id", r."available_after", r."held_after", NULL::TEXT,
        p."hold_id", p."tenant_id", p."units", CASE WHEN p_kind[i] = 'capture' THEN 'captured' ELSE 'voided' END,
        CASE WHEN p_kind[i] = 'capture' THEN v_captured END, p."expires_at"::TIMESTAMPTZ, p."created_at"::TIMESTAMPTZ, v_now::TIMESTAMPTZ;
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
