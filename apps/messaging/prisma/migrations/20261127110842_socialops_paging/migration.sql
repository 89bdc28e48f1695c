-- DropIndex
DROP INDEX "social_messages_thread_id_created_at_idx";

-- AlterTable
ALTER TABLE "social_messages" ADD COLUMN     "seq" BIGSERIAL NOT NULL;

-- Existing rows take their list positions in creation order (docs/decisions/0212).
UPDATE "social_messages" AS t SET "seq" = o.n FROM (SELECT "id", row_number() OVER (ORDER BY "created_at", "id") AS n FROM "social_messages") AS o WHERE t."id" = o."id";
SELECT setval(pg_get_serial_sequence('"social_messages"', 'seq'), (SELECT COALESCE(max("seq"), 0) + 1 FROM "social_messages"), false);

-- AlterTable
ALTER TABLE "social_threads" ADD COLUMN     "seq" BIGSERIAL NOT NULL;

-- Existing rows take their list positions in creation order (docs/decisions/0212).
UPDATE "social_threads" AS t SET "seq" = o.n FROM (SELECT "id", row_number() OVER (ORDER BY "created_at", "id") AS n FROM "social_threads") AS o WHERE t."id" = o."id";
SELECT setval(pg_get_serial_sequence('"social_threads"', 'seq'), (SELECT COALESCE(max("seq"), 0) + 1 FROM "social_threads"), false);

-- CreateIndex
CREATE INDEX "social_messages_thread_id_seq_idx" ON "social_messages"("thread_id", "seq");

-- CreateIndex
CREATE INDEX "social_threads_instance_id_seq_idx" ON "social_threads"("instance_id", "seq");
