-- CreateTable
CREATE TABLE "upstreams" (
    "id" TEXT NOT NULL,
    "provider" TEXT NOT NULL,
    "base_url" TEXT NOT NULL,
    "enabled" BOOLEAN NOT NULL,
    "api_key_ciphertext" BYTEA,
    "api_key_key_id" TEXT,
    "version" INTEGER NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "upstreams_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "price_versions" (
    "id" TEXT NOT NULL,
    "model_alias" TEXT NOT NULL,
    "version" INTEGER NOT NULL,
    "input_units_per_mtok" BIGINT NOT NULL,
    "output_units_per_mtok" BIGINT NOT NULL,
    "created_by" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "price_versions_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "offers" (
    "id" TEXT NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "model_alias" TEXT NOT NULL,
    "discount_bps" INTEGER NOT NULL,
    "expires_at" TIMESTAMPTZ(3),
    "version" INTEGER NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "offers_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "upstreams_created_at_idx" ON "upstreams"("created_at");

-- CreateIndex
CREATE INDEX "upstreams_api_key_key_id_idx" ON "upstreams"("api_key_key_id");

-- CreateIndex
CREATE UNIQUE INDEX "price_versions_model_alias_version_key" ON "price_versions"("model_alias", "version");

-- CreateIndex
CREATE INDEX "offers_created_at_idx" ON "offers"("created_at");

-- CreateIndex
CREATE INDEX "offers_model_alias_idx" ON "offers"("model_alias");

-- CreateIndex
CREATE UNIQUE INDEX "offers_tenant_id_model_alias_key" ON "offers"("tenant_id", "model_alias");

-- CreateIndex
CREATE INDEX "models_upstream_id_idx" ON "models"("upstream_id");

-- AddForeignKey
ALTER TABLE "models" ADD CONSTRAINT "models_upstream_id_fkey" FOREIGN KEY ("upstream_id") REFERENCES "upstreams"("id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- AddForeignKey
ALTER TABLE "price_versions" ADD CONSTRAINT "price_versions_model_alias_fkey" FOREIGN KEY ("model_alias") REFERENCES "models"("alias") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- AddForeignKey
ALTER TABLE "offers" ADD CONSTRAINT "offers_model_alias_fkey" FOREIGN KEY ("model_alias") REFERENCES "models"("alias") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- Written by hand (Prisma cannot express these).

-- Domain rules the database holds whatever writes it.
ALTER TABLE "upstreams" ADD CONSTRAINT "upstreams_version_check" CHECK ("version" >= 1);
ALTER TABLE "upstreams" ADD CONSTRAINT "upstreams_api_key_check"
    CHECK (("api_key_ciphertext" IS NULL) = ("api_key_key_id" IS NULL));
ALTER TABLE "models" ADD CONSTRAINT "models_version_check" CHECK ("version" >= 1);
ALTER TABLE "models" ADD CONSTRAINT "models_max_output_tokens_check" CHECK ("max_output_tokens" >= 1);
ALTER TABLE "price_versions" ADD CONSTRAINT "price_versions_version_check" CHECK ("version" >= 1);
ALTER TABLE "price_versions" ADD CONSTRAINT "price_versions_units_check"
    CHECK ("input_units_per_mtok" >= 0 AND "output_units_per_mtok" >= 0);
ALTER TABLE "offers" ADD CONSTRAINT "offers_version_check" CHECK ("version" >= 1);
ALTER TABLE "offers" ADD CONSTRAINT "offers_discount_bps_check" CHECK ("discount_bps" BETWEEN 0 AND 10000);

-- A price version never changes and is never deleted (docs/decisions/0016): the
-- database refuses UPDATE, DELETE and TRUNCATE of price_versions, whoever asks.
CREATE FUNCTION "price_versions_immutable"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'price versions are immutable: % on price_versions is not allowed', TG_OP
        USING ERRCODE = 'integrity_constraint_violation';
END;
$$;

CREATE TRIGGER "price_versions_no_update_or_delete"
    BEFORE UPDATE OR DELETE ON "price_versions"
    FOR EACH ROW EXECUTE FUNCTION "price_versions_immutable"();

CREATE TRIGGER "price_versions_no_truncate"
    BEFORE TRUNCATE ON "price_versions"
    FOR EACH STATEMENT EXECUTE FUNCTION "price_versions_immutable"();
