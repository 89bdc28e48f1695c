-- DropIndex
DROP INDEX "api_keys_tenant_id_created_at_idx";

-- AlterTable
ALTER TABLE "api_keys" ADD COLUMN     "expiry_notice" INTEGER,
ADD COLUMN     "seq" BIGSERIAL NOT NULL;

-- Existing rows take their list positions in creation order (docs/decisions/0212).
UPDATE "api_keys" AS t SET "seq" = o.n FROM (SELECT "id", row_number() OVER (ORDER BY "created_at", "id") AS n FROM "api_keys") AS o WHERE t."id" = o."id";
SELECT setval(pg_get_serial_sequence('"api_keys"', 'seq'), (SELECT COALESCE(max("seq"), 0) + 1 FROM "api_keys"), false);

-- CreateIndex
CREATE INDEX "api_keys_tenant_id_seq_idx" ON "api_keys"("tenant_id", "seq");

-- CreateIndex
CREATE INDEX "api_keys_expires_at_idx" ON "api_keys"("expires_at");
