-- CreateTable
CREATE TABLE "reconciler_checkpoints" (
    "name" TEXT NOT NULL,
    "settled_at" TIMESTAMPTZ(3) NOT NULL,
    "record_id" TEXT NOT NULL,

    CONSTRAINT "reconciler_checkpoints_pkey" PRIMARY KEY ("name")
);

-- CreateIndex
CREATE INDEX "usage_records_settled_at_id_idx" ON "usage_records"("settled_at", "id");

-- Records settled before this migration were captured before they were marked
-- completed (the earlier order): the check starts here.
INSERT INTO "reconciler_checkpoints" ("name", "settled_at", "record_id") VALUES ('captures', CURRENT_TIMESTAMP, '');
