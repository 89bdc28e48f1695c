-- AlterTable
ALTER TABLE "tron_leases" ADD COLUMN     "delegation_txids" TEXT[] DEFAULT ARRAY[]::TEXT[],
ADD COLUMN     "order_intent_at" TIMESTAMPTZ(3),
ADD COLUMN     "order_intent_block" BIGINT;
