-- Issue 36 (docs/decisions/0240): a metered call's writes cost the same on a full database.
-- Written by hand: partial indexes and storage parameters are not in schema.prisma's language.
--
-- usage_records: a record is inserted `reserved` and updated once when it settles. That
-- update cannot be HOT (the relay tails settled_txid, an indexed column), so its new row
-- version goes into every index whose predicate it meets. Two indexes that held every
-- record become partial, holding only the rows their readers look for:
--  - the reconciler's candidates (`reserved` orphans oldest first, `review` records) and
--    workPending read the records not settled yet: (status, created_at) over those alone,
--    a few hundred rows whatever the history, instead of (status, hold_expires_at) over all;
--  - the check of captures walks, in settlement order, completed records with a hold of
--    their own: records charged from an allotment (hold_id null, nearly all) stay out.
-- An open then enters 6 indexes instead of 7, a settlement 6 instead of 8, and neither
-- index grows with the history.
DROP INDEX "usage_records_status_hold_expires_at_idx";
DROP INDEX "usage_records_settled_at_id_idx";
CREATE INDEX "usage_records_unsettled_idx" ON "usage_records"("status", "created_at") WHERE "status" IN ('reserved', 'review');
CREATE INDEX "usage_records_own_hold_settled_idx" ON "usage_records"("settled_at", "id") WHERE "hold_id" IS NOT NULL;
-- Every row leaves one dead version when it settles: vacuum after 2 % of the table
-- changed (or was inserted) instead of 20 %, so dead versions and index bloat stay small.
ALTER TABLE "usage_records" SET (autovacuum_vacuum_scale_factor = 0.02, autovacuum_vacuum_insert_scale_factor = 0.02, autovacuum_analyze_scale_factor = 0.02);

-- allotments: every claim and settlement updates its tenant's open row, and no index holds
-- a column they change, so the update is HOT when the row's page has room for the new
-- version. Half of each page stays free for that (open rows of many tenants share pages),
-- and the table is vacuumed after every 1,000 dead versions whatever its size (pruning on
-- the page does most of the work; vacuum keeps the visibility map and the FSM current).
ALTER TABLE "allotments" SET (fillfactor = 50, autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 1000);
