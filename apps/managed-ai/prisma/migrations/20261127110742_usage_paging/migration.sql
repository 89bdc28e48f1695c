-- DropIndex
DROP INDEX "usage_records_tenant_id_created_at_idx";

-- AlterTable
ALTER TABLE "usage_records" ADD COLUMN     "seq" BIGSERIAL NOT NULL;

-- Existing rows take their list positions in creation order (docs/decisions/0212).
UPDATE "usage_records" AS t SET "seq" = o.n FROM (SELECT "id", row_number() OVER (ORDER BY "created_at", "id") AS n FROM "usage_records") AS o WHERE t."id" = o."id";
SELECT setval(pg_get_serial_sequence('"usage_records"', 'seq'), (SELECT COALESCE(max("seq"), 0) + 1 FROM "usage_records"), false);

-- CreateIndex
CREATE INDEX "usage_records_tenant_id_seq_idx" ON "usage_records"("tenant_id", "seq");
