-- AlterTable
ALTER TABLE "service_instances" ADD COLUMN     "api_key_ciphertext" BYTEA,
ADD COLUMN     "api_key_key_id" TEXT,
ADD COLUMN     "connected_account_id" TEXT;

-- CreateTable
CREATE TABLE "connected_accounts" (
    "id" TEXT NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "provider" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "secret_ciphertext" BYTEA NOT NULL,
    "secret_key_id" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "connected_accounts_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "connected_accounts_tenant_id_created_at_idx" ON "connected_accounts"("tenant_id", "created_at");

-- CreateIndex
CREATE INDEX "connected_accounts_secret_key_id_idx" ON "connected_accounts"("secret_key_id");

-- CreateIndex
CREATE INDEX "service_instances_connected_account_id_idx" ON "service_instances"("connected_account_id");
