-- CreateTable
CREATE TABLE "service_instances" (
    "id" TEXT NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "service_id" TEXT NOT NULL,
    "alias" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "mode" TEXT NOT NULL,
    "config" JSONB NOT NULL,
    "version" INTEGER NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "service_instances_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "usage_records" (
    "id" TEXT NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "api_key_id" TEXT,
    "service_alias" TEXT NOT NULL,
    "model_alias" TEXT NOT NULL,
    "price_id" TEXT NOT NULL,
    "upstream_id" TEXT NOT NULL,
    "discount_bps" INTEGER NOT NULL,
    "status" TEXT NOT NULL,
    "stream" BOOLEAN NOT NULL,
    "input_tokens_bound" INTEGER NOT NULL,
    "output_tokens_cap" INTEGER NOT NULL,
    "reserved_units" BIGINT NOT NULL,
    "final_units" BIGINT,
    "usage_json" TEXT,
    "error_code" TEXT,
    "hold_id" TEXT,
    "hold_expires_at" TIMESTAMPTZ(3) NOT NULL,
    "settled_at" TIMESTAMPTZ(3),
    "refunded_units" BIGINT,
    "released_by" TEXT,
    "release_reason" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "usage_records_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "idempotency_keys" (
    "tenant_id" TEXT NOT NULL,
    "api_key_id" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "request_id" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "idempotency_keys_pkey" PRIMARY KEY ("tenant_id","api_key_id","key")
);

-- CreateIndex
CREATE INDEX "service_instances_tenant_id_created_at_idx" ON "service_instances"("tenant_id", "created_at");

-- CreateIndex
CREATE UNIQUE INDEX "service_instances_tenant_id_service_id_alias_key" ON "service_instances"("tenant_id", "service_id", "alias");

-- CreateIndex
CREATE INDEX "usage_records_tenant_id_created_at_idx" ON "usage_records"("tenant_id", "created_at");

-- CreateIndex
CREATE INDEX "usage_records_created_at_idx" ON "usage_records"("created_at");

-- CreateIndex
CREATE INDEX "usage_records_status_hold_expires_at_idx" ON "usage_records"("status", "hold_expires_at");

-- Hand-written: the money of a usage record is never negative and never more than reserved.
ALTER TABLE "usage_records"
  ADD CONSTRAINT "usage_records_status_check" CHECK ("status" IN ('reserved', 'completed', 'failed', 'review')),
  ADD CONSTRAINT "usage_records_reserved_units_check" CHECK ("reserved_units" >= 0),
  ADD CONSTRAINT "usage_records_final_units_check" CHECK ("final_units" IS NULL OR ("final_units" >= 0 AND "final_units" <= "reserved_units")),
  ADD CONSTRAINT "usage_records_refunded_units_check" CHECK ("refunded_units" IS NULL OR ("refunded_units" >= 0 AND "refunded_units" <= "reserved_units"));
ALTER TABLE "service_instances"
  ADD CONSTRAINT "service_instances_status_check" CHECK ("status" IN ('active', 'disabled'));
