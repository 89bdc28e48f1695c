-- CreateTable
CREATE TABLE "tron_quotes" (
    "id" TEXT NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "receiver" TEXT NOT NULL,
    "energy" INTEGER NOT NULL,
    "duration_seconds" INTEGER NOT NULL,
    "cost_units" BIGINT NOT NULL,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "tron_quotes_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "tron_leases" (
    "id" TEXT NOT NULL,
    "job_id" TEXT NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "quote_id" TEXT NOT NULL,
    "receiver" TEXT NOT NULL,
    "energy" INTEGER NOT NULL,
    "duration_seconds" INTEGER NOT NULL,
    "cost_units" BIGINT NOT NULL,
    "dry_run" BOOLEAN NOT NULL,
    "idempotency_key" TEXT,
    "fingerprint" TEXT NOT NULL,
    "stage" TEXT NOT NULL,
    "hold_id" TEXT,
    "provider_order_id" TEXT,
    "delegator" TEXT,
    "verify_deadline" TIMESTAMPTZ(3),
    "outcome" JSONB,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "tron_leases_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "job_callback_targets" (
    "job_id" TEXT NOT NULL,
    "url" TEXT NOT NULL,
    "secret_ciphertext" BYTEA NOT NULL,
    "secret_key_id" TEXT NOT NULL,

    CONSTRAINT "job_callback_targets_pkey" PRIMARY KEY ("job_id")
);

-- CreateTable
CREATE TABLE "job_callback_deliveries" (
    "event_id" TEXT NOT NULL,
    "seq" BIGSERIAL NOT NULL,
    "job_id" TEXT NOT NULL,
    "job" JSONB NOT NULL,
    "state" TEXT NOT NULL,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "last_status" INTEGER,
    "last_error" TEXT,
    "next_attempt_at" TIMESTAMPTZ(3) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "job_callback_deliveries_pkey" PRIMARY KEY ("event_id")
);

-- CreateIndex
CREATE INDEX "tron_quotes_tenant_id_created_at_idx" ON "tron_quotes"("tenant_id", "created_at");

-- CreateIndex
CREATE UNIQUE INDEX "tron_leases_job_id_key" ON "tron_leases"("job_id");

-- CreateIndex
CREATE INDEX "tron_leases_tenant_id_created_at_idx" ON "tron_leases"("tenant_id", "created_at");

-- CreateIndex
CREATE UNIQUE INDEX "tron_leases_tenant_id_idempotency_key_key" ON "tron_leases"("tenant_id", "idempotency_key");

-- CreateIndex
CREATE UNIQUE INDEX "job_callback_deliveries_seq_key" ON "job_callback_deliveries"("seq");

-- CreateIndex
CREATE INDEX "job_callback_deliveries_state_next_attempt_at_idx" ON "job_callback_deliveries"("state", "next_attempt_at");

-- CreateIndex
CREATE INDEX "job_callback_deliveries_job_id_seq_idx" ON "job_callback_deliveries"("job_id", "seq");
