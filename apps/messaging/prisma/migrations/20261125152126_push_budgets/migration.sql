-- AlterTable
ALTER TABLE "push_messages" ADD COLUMN     "budgeted" BOOLEAN NOT NULL DEFAULT false;
