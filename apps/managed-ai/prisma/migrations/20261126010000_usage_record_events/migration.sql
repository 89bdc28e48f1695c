-- Events from the rows (docs/decisions/0205): a usage record's `request_reserved` and
-- `request_settled` events are read from the record itself by a relay that tails it,
-- instead of an outbox row inserted with each write and deleted after its publish.
--
-- Each event's position is the id of the transaction that wrote it (no lock, no
-- sequence): the open's and the first settlement's, kept in their own columns. The
-- settlement's event is a fact of that moment, so what it says is kept apart from the
-- columns later transitions change (a release, a failed capture moving the record on).
-- Written by hand: the partial indexes and the view are not in schema.prisma's language.
ALTER TABLE "usage_records"
  ADD COLUMN "opened_txid" BIGINT,
  ADD COLUMN "settled_txid" BIGINT,
  ADD COLUMN "settled_event_at" TIMESTAMPTZ(3),
  ADD COLUMN "settled_status" TEXT,
  ADD COLUMN "settled_error_code" TEXT,
  ADD COLUMN "settled_final_units" BIGINT;

CREATE INDEX "usage_records_opened_txid_idx" ON "usage_records"("opened_txid") WHERE "opened_txid" IS NOT NULL;
CREATE INDEX "usage_records_settled_txid_idx" ON "usage_records"("settled_txid") WHERE "settled_txid" IS NOT NULL;

-- How far a relay that tails a log has published (as in the ledger).
CREATE TABLE "relay_checkpoints" (
    "name" TEXT NOT NULL,
    "position" BIGINT NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "relay_checkpoints_pkey" PRIMARY KEY ("name")
);
-- Records written before this migration had their events in the outbox (published, or
-- still there for the outbox relay): none has a transaction id, so the tail starts at 0.
INSERT INTO "relay_checkpoints" ("name", "position") VALUES ('usage_record_events', 0);

-- The log the relay tails: one row per event, seq the writing transaction's id. Event
-- ids are derived from the record's (a replay publishes the same id, which JetStream and
-- the consumers drop); `usageRecordEventId` in storage/usage-records.ts computes the same.
CREATE VIEW "usage_record_events" AS
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
SELECT r."settled_txid" AS "seq",
       'evt_' || upper(substr(md5(r."id" || ':settled'), 1, 26)) AS "id",
       'managed_ai.request_settled' AS "type",
       jsonb_build_object('request_id', r."id", 'tenant_id', r."tenant_id", 'key_id', r."api_key_id",
         'status', r."settled_status", 'reserved_units', r."reserved_units"::TEXT,
         'final_units', r."settled_final_units"::TEXT, 'error_code', r."settled_error_code") AS "payload",
       r."id" AS "request_id", r."settled_event_at" AS "created_at"
FROM "usage_records" r
WHERE r."settled_txid" IS NOT NULL;
