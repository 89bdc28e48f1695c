-- AlterTable
ALTER TABLE "api_keys" ADD COLUMN     "budget_period" TEXT,
ADD COLUMN     "budget_units" BIGINT;
