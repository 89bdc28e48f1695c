-- DropIndex
DROP INDEX "files_tenant_id_created_at_idx";

-- AlterTable
ALTER TABLE "files" ADD COLUMN     "seq" BIGSERIAL NOT NULL;

-- Existing rows take their list positions in creation order (docs/decisions/0212).
UPDATE "files" AS t SET "seq" = o.n FROM (SELECT "id", row_number() OVER (ORDER BY "created_at", "id") AS n FROM "files") AS o WHERE t."id" = o."id";
SELECT setval(pg_get_serial_sequence('"files"', 'seq'), (SELECT COALESCE(max("seq"), 0) + 1 FROM "files"), false);

-- CreateIndex
CREATE INDEX "files_tenant_id_seq_idx" ON "files"("tenant_id", "seq");
