-- AlterTable
ALTER TABLE "files" ADD COLUMN     "content_type" TEXT NOT NULL DEFAULT 'application/octet-stream',
ADD COLUMN     "last_download_at" TIMESTAMPTZ(3),
ADD COLUMN     "removed_at" TIMESTAMPTZ(3),
ADD COLUMN     "removed_reason" TEXT,
ADD COLUMN     "state" TEXT NOT NULL DEFAULT 'ready',
ADD COLUMN     "token" TEXT;

-- CreateIndex
CREATE UNIQUE INDEX "files_token_key" ON "files"("token");

-- CreateIndex
CREATE INDEX "files_state_expires_at_idx" ON "files"("state", "expires_at");
