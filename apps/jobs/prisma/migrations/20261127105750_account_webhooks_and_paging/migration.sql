-- DropIndex
DROP INDEX "jobs_tenant_id_created_at_idx";

-- DropIndex
DROP INDEX "tron_leases_tenant_id_created_at_idx";

-- AlterTable
ALTER TABLE "jobs" ADD COLUMN     "seq" BIGSERIAL NOT NULL;

-- Existing rows take their list positions in creation order (docs/decisions/0212).
UPDATE "jobs" AS t SET "seq" = o.n FROM (SELECT "id", row_number() OVER (ORDER BY "created_at", "id") AS n FROM "jobs") AS o WHERE t."id" = o."id";
SELECT setval(pg_get_serial_sequence('"jobs"', 'seq'), (SELECT COALESCE(max("seq"), 0) + 1 FROM "jobs"), false);

-- AlterTable
ALTER TABLE "tron_leases" ADD COLUMN     "seq" BIGSERIAL NOT NULL;

-- Existing rows take their list positions in creation order (docs/decisions/0212).
UPDATE "tron_leases" AS t SET "seq" = o.n FROM (SELECT "id", row_number() OVER (ORDER BY "created_at", "id") AS n FROM "tron_leases") AS o WHERE t."id" = o."id";
SELECT setval(pg_get_serial_sequence('"tron_leases"', 'seq'), (SELECT COALESCE(max("seq"), 0) + 1 FROM "tron_leases"), false);

-- CreateTable
CREATE TABLE "account_webhooks" (
    "id" TEXT NOT NULL,
    "seq" BIGSERIAL NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "url" TEXT NOT NULL,
    "events" TEXT[],
    "description" TEXT,
    "secret_ciphertext" BYTEA NOT NULL,
    "secret_key_id" TEXT NOT NULL,
    "created_by" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "account_webhooks_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "account_webhook_deliveries" (
    "seq" BIGSERIAL NOT NULL,
    "webhook_id" TEXT NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "event_id" TEXT NOT NULL,
    "event" TEXT NOT NULL,
    "data" JSONB NOT NULL,
    "state" TEXT NOT NULL,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "last_status" INTEGER,
    "last_error" TEXT,
    "next_attempt_at" TIMESTAMPTZ(3) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "account_webhook_deliveries_pkey" PRIMARY KEY ("seq")
);

-- CreateTable
CREATE TABLE "account_alerts" (
    "tenant_id" TEXT NOT NULL,
    "balance_low_units" BIGINT,
    "below" BOOLEAN NOT NULL DEFAULT false,
    "due_seq" BIGINT NOT NULL DEFAULT 0,
    "checked_seq" BIGINT NOT NULL DEFAULT 0,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "account_alerts_pkey" PRIMARY KEY ("tenant_id")
);

-- CreateIndex
CREATE INDEX "account_webhooks_tenant_id_seq_idx" ON "account_webhooks"("tenant_id", "seq");

-- CreateIndex
CREATE INDEX "account_webhook_deliveries_state_next_attempt_at_idx" ON "account_webhook_deliveries"("state", "next_attempt_at");

-- CreateIndex
CREATE INDEX "account_webhook_deliveries_webhook_id_seq_idx" ON "account_webhook_deliveries"("webhook_id", "seq");

-- CreateIndex
CREATE UNIQUE INDEX "account_webhook_deliveries_webhook_id_event_id_key" ON "account_webhook_deliveries"("webhook_id", "event_id");

-- CreateIndex
CREATE INDEX "jobs_tenant_id_seq_idx" ON "jobs"("tenant_id", "seq");

-- CreateIndex
CREATE INDEX "tron_leases_tenant_id_seq_idx" ON "tron_leases"("tenant_id", "seq");

-- AddForeignKey
ALTER TABLE "account_webhook_deliveries" ADD CONSTRAINT "account_webhook_deliveries_webhook_id_fkey" FOREIGN KEY ("webhook_id") REFERENCES "account_webhooks"("id") ON DELETE CASCADE ON UPDATE CASCADE;
