-- Issue 40 (docs/decisions/0028, addendum): work that never stands still at the head of a queue,
-- and releases any replica can send again.
--  - usage_records.recheck_at: when the reconciler looks at a record again; a record it
--    leaves as it is (waiting for an operator) comes back later and later.
--  - allotments.next_check_at / checks: the same for the closing of allotments. The index
--    on (state, updated_at) goes: every claim changed updated_at, so no claim's update of
--    the row could be HOT; no claim touches next_check_at.
--  - allotment_releases: every value an allotment's `frozen` has taken, each one release
--    to the ledger, and whether the ledger has confirmed it.
-- DropIndex
DROP INDEX "allotments_state_updated_at_idx";

-- AlterTable
ALTER TABLE "allotments" ADD COLUMN     "checks" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "next_check_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP;

-- AlterTable
ALTER TABLE "usage_records" ADD COLUMN     "recheck_at" TIMESTAMPTZ(3);

-- CreateTable
CREATE TABLE "allotment_releases" (
    "allotment_id" TEXT NOT NULL,
    "total" BIGINT NOT NULL,
    "confirmed" BOOLEAN NOT NULL DEFAULT false,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "allotment_releases_pkey" PRIMARY KEY ("allotment_id","total")
);

-- CreateIndex
CREATE INDEX "allotment_releases_confirmed_allotment_id_idx" ON "allotment_releases"("confirmed", "allotment_id");

-- CreateIndex
CREATE INDEX "allotments_state_next_check_at_idx" ON "allotments"("state", "next_check_at");


-- What was frozen before is taken as given back (its release was named freeze:<id> then, and
-- its allotment's void gives back whatever a lost one kept).
INSERT INTO "allotment_releases" ("allotment_id", "total", "confirmed") SELECT "id", "frozen", true FROM "allotments" WHERE "frozen" > 0;
