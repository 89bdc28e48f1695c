-- Issue 36 (docs/decisions/0242, the next step of 0240): a settlement's update of its
-- usage record is HOT. Written by hand: triggers, partial indexes, storage parameters and
-- the view are not in schema.prisma's language.
--
-- A settlement changes status, hold_id, settled_at and settled_txid. Each of them was a
-- column (or a predicate) of an index of usage_records, so every settlement wrote a new row
-- version into all 6 indexes of the largest table. Those indexes move out, into small
-- tables of their own, and usage_records keeps only indexes on columns that never change
-- after the insert (id, tenant_id + seq, created_at, opened_txid):
--  - usage_records_unsettled: the records still `reserved` or in `review` (the reconciler's
--    candidates, workPending, an allotment's records in flight): a row per record while it
--    is not settled, a few hundred rows whatever the history;
--  - usage_record_own_holds: the records with a hold of their own and a settlement time,
--    in the order the reconciler's check of captures walks them;
--  - usage_record_settlements: the append-only log of settlement events the relay tails
--    (seq: the settling transaction's id), one row per record with what its event says.
-- The first two follow the records by statement-level triggers (transition tables: one
-- statement per batch), so every writer of usage_records, present and future, keeps them
-- right; the log is written by the settlement itself (storage/usage-records.ts, SETTLE).

CREATE TABLE "usage_records_unsettled" (
    "id" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "usage_records_unsettled_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "usage_records_unsettled_status_created_at_idx" ON "usage_records_unsettled"("status", "created_at");

CREATE TABLE "usage_record_own_holds" (
    "id" TEXT NOT NULL,
    "settled_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "usage_record_own_holds_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "usage_record_own_holds_settled_at_id_idx" ON "usage_record_own_holds"("settled_at", "id");

CREATE TABLE "usage_record_settlements" (
    "seq" BIGINT NOT NULL,
    "record_id" TEXT NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "api_key_id" TEXT,
    "status" TEXT NOT NULL,
    "reserved_units" BIGINT NOT NULL,
    "final_units" BIGINT,
    "error_code" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "usage_record_settlements_pkey" PRIMARY KEY ("seq", "record_id")
);

-- The rows already there.
INSERT INTO "usage_records_unsettled" ("id", "status", "created_at")
  SELECT "id", "status", "created_at" FROM "usage_records" WHERE "status" IN ('reserved', 'review');
INSERT INTO "usage_record_own_holds" ("id", "settled_at")
  SELECT "id", "settled_at" FROM "usage_records" WHERE "hold_id" IS NOT NULL AND "settled_at" IS NOT NULL;
INSERT INTO "usage_record_settlements" ("seq", "record_id", "tenant_id", "api_key_id", "status", "reserved_units", "final_units", "error_code", "created_at")
  SELECT "settled_txid", "id", "tenant_id", "api_key_id", "settled_status", "reserved_units", "settled_final_units", "settled_error_code", "settled_event_at"
  FROM "usage_records" WHERE "settled_txid" IS NOT NULL;

CREATE FUNCTION "usage_records_track_insert"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO usage_records_unsettled (id, status, created_at)
    SELECT id, status, created_at FROM new_rows WHERE status IN ('reserved', 'review');
  INSERT INTO usage_record_own_holds (id, settled_at)
    SELECT id, settled_at FROM new_rows WHERE hold_id IS NOT NULL AND settled_at IS NOT NULL;
  RETURN NULL;
END $$;

CREATE FUNCTION "usage_records_track_update"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  -- Only rows whose status, created_at, hold_id or settled_at changed touch the side tables.
  DELETE FROM usage_records_unsettled s USING old_rows o JOIN new_rows n ON n.id = o.id
    WHERE s.id = o.id AND o.status IN ('reserved', 'review') AND n.status NOT IN ('reserved', 'review');
  INSERT INTO usage_records_unsettled (id, status, created_at)
    SELECT n.id, n.status, n.created_at FROM new_rows n JOIN old_rows o ON o.id = n.id
    WHERE n.status IN ('reserved', 'review') AND (n.status <> o.status OR n.created_at <> o.created_at)
    ON CONFLICT (id) DO UPDATE SET status = EXCLUDED.status, created_at = EXCLUDED.created_at;
  DELETE FROM usage_record_own_holds h USING old_rows o JOIN new_rows n ON n.id = o.id
    WHERE h.id = o.id AND o.hold_id IS NOT NULL AND o.settled_at IS NOT NULL AND (n.hold_id IS NULL OR n.settled_at IS NULL);
  INSERT INTO usage_record_own_holds (id, settled_at)
    SELECT n.id, n.settled_at FROM new_rows n JOIN old_rows o ON o.id = n.id
    WHERE n.hold_id IS NOT NULL AND n.settled_at IS NOT NULL
      AND (o.hold_id IS NULL OR o.settled_at IS NULL OR o.settled_at <> n.settled_at)
    ON CONFLICT (id) DO UPDATE SET settled_at = EXCLUDED.settled_at;
  RETURN NULL;
END $$;

CREATE FUNCTION "usage_records_track_delete"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM usage_records_unsettled WHERE id IN (SELECT id FROM old_rows WHERE status IN ('reserved', 'review'));
  DELETE FROM usage_record_own_holds WHERE id IN (SELECT id FROM old_rows WHERE hold_id IS NOT NULL AND settled_at IS NOT NULL);
  -- A retired record's settlement event (the log has no index on record_id: retention
  -- deletes whole months, once; a refused request's record has no settlement).
  IF EXISTS (SELECT 1 FROM old_rows WHERE settled_txid IS NOT NULL) THEN
    DELETE FROM usage_record_settlements WHERE record_id IN (SELECT id FROM old_rows WHERE settled_txid IS NOT NULL);
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER "usage_records_track_insert" AFTER INSERT ON "usage_records"
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "usage_records_track_insert"();
CREATE TRIGGER "usage_records_track_update" AFTER UPDATE ON "usage_records"
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "usage_records_track_update"();
CREATE TRIGGER "usage_records_track_delete" AFTER DELETE ON "usage_records"
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION "usage_records_track_delete"();

-- The settlement's events are tailed from their log, which holds what each says (as the
-- record's settled_* columns, which stay: the record's own note of its first settlement).
CREATE OR REPLACE VIEW "usage_record_events" AS
SELECT r."opened_txid" AS "seq",
       'evt_' || upper(substr(md5(r."id" || ':reserved'), 1, 26)) AS "id",
       'managed_ai.request_reserved' AS "type",
       jsonb_build_object('request_id', r."id", 'tenant_id', r."tenant_id", 'key_id', r."api_key_id",
         'service_alias', r."service_alias", 'model_alias', r."model_alias", 'price_id', r."price_id",
         'reserved_units', r."reserved_units"::TEXT, 'stream', r."stream") AS "payload",
       r."id" AS "request_id", r."created_at"
FROM "usage_records" r
WHERE r."opened_txid" IS NOT NULL
UNION ALL
SELECT s."seq",
       'evt_' || upper(substr(md5(s."record_id" || ':settled'), 1, 26)) AS "id",
       'managed_ai.request_settled' AS "type",
       jsonb_build_object('request_id', s."record_id", 'tenant_id', s."tenant_id", 'key_id', s."api_key_id",
         'status', s."status", 'reserved_units', s."reserved_units"::TEXT,
         'final_units', s."final_units"::TEXT, 'error_code', s."error_code") AS "payload",
       s."record_id" AS "request_id", s."created_at"
FROM "usage_record_settlements" s;

DROP INDEX "usage_records_unsettled_idx";
DROP INDEX "usage_records_own_hold_settled_idx";
DROP INDEX "usage_records_settled_txid_idx";

-- Room on each page for the settled version of the rows inserted there (a HOT update needs
-- it on the same page; pruning gives back the dead version's space). New pages only.
-- 60 measured better than 75 (64-72 % of settlements HOT against 54-57 %; docs/benchmarks/seeded.md).
ALTER TABLE "usage_records" SET (fillfactor = 60);
-- The small tables turn over every row: vacuum them by count, whatever their size.
ALTER TABLE "usage_records_unsettled" SET (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 1000);
