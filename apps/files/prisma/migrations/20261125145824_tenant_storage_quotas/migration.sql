-- CreateTable
CREATE TABLE "tenant_storage" (
    "tenant_id" TEXT NOT NULL,
    "bytes_used" BIGINT NOT NULL DEFAULT 0,
    "files_used" INTEGER NOT NULL DEFAULT 0,
    "bytes_quota" BIGINT,
    "files_quota" INTEGER,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "tenant_storage_pkey" PRIMARY KEY ("tenant_id")
);

-- Backfill: what each tenant's ready files already hold.
INSERT INTO "tenant_storage" ("tenant_id", "bytes_used", "files_used")
SELECT "tenant_id", SUM("size"), COUNT(*) FROM "files" WHERE "state" = 'ready' GROUP BY "tenant_id";
