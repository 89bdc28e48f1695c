-- Issue 36 (docs/decisions/0330): the audit trail stores no copy of the events a usage
-- record keeps; a refused request's record is deleted, so its reservation event is kept here.
-- CreateTable
CREATE TABLE "usage_record_refusals" (
    "request_id" TEXT NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "event_id" TEXT NOT NULL,
    "payload" JSONB NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "usage_record_refusals_pkey" PRIMARY KEY ("request_id")
);

-- CreateIndex
CREATE INDEX "usage_record_refusals_created_at_idx" ON "usage_record_refusals"("created_at");
