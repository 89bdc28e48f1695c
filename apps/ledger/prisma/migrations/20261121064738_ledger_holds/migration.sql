-- Holds and a journal that balances per transfer (docs/decisions/0010).
-- accounts: one row per tenant with the running balances of its two journal
-- accounts (available, held), system accounts (funding, revenue) keep no row.
-- transfers: every movement, keyed by operation_id, with the parameters' hash and
-- the balances right after it (what a replay returns). entries: the signed legs
-- of each transfer. holds: reservations, settled exactly once.
-- Written by hand from `gateway-migrate create` so that data of the first schema
-- (credits only) is converted in place instead of dropped.

-- AlterTable accounts: one row per (tenant, kind) -> one row per tenant.
ALTER TABLE "entries" DROP CONSTRAINT "entries_account_id_fkey";
DROP INDEX "accounts_tenant_id_kind_key";
CREATE TEMP TABLE "accounts_v0" AS SELECT "tenant_id", "kind", "balance", "created_at" FROM "accounts" WHERE "tenant_id" IS NOT NULL;
DELETE FROM "accounts";
ALTER TABLE "accounts" DROP CONSTRAINT "accounts_pkey",
DROP COLUMN "balance",
DROP COLUMN "id",
DROP COLUMN "kind",
ADD COLUMN     "available" BIGINT NOT NULL DEFAULT 0,
ADD COLUMN     "held" BIGINT NOT NULL DEFAULT 0,
ADD COLUMN     "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
ALTER COLUMN "tenant_id" SET NOT NULL,
ADD CONSTRAINT "accounts_pkey" PRIMARY KEY ("tenant_id");
INSERT INTO "accounts" ("tenant_id", "available", "held", "created_at")
SELECT "tenant_id",
       COALESCE(sum("balance") FILTER (WHERE "kind" = 'available'), 0),
       COALESCE(sum("balance") FILTER (WHERE "kind" = 'held'), 0),
       min("created_at")
FROM "accounts_v0" GROUP BY "tenant_id";
DROP TABLE "accounts_v0";

-- AlterTable entries: legs named by account kind and numbered within their transfer.
DROP INDEX "entries_account_id_idx";
DROP INDEX "entries_transfer_id_idx";
ALTER TABLE "entries" ADD COLUMN "account" TEXT, ADD COLUMN "leg" SMALLINT;
UPDATE "entries" e SET "account" = split_part(e."account_id", ':', 1), "leg" = n."leg"
FROM (SELECT "id", (row_number() OVER (PARTITION BY "transfer_id" ORDER BY "id") - 1)::smallint AS "leg" FROM "entries") n
WHERE n."id" = e."id";
ALTER TABLE "entries" DROP CONSTRAINT "entries_pkey",
DROP COLUMN "account_id",
DROP COLUMN "created_at",
DROP COLUMN "id",
ALTER COLUMN "account" SET NOT NULL,
ALTER COLUMN "leg" SET NOT NULL,
ADD CONSTRAINT "entries_pkey" PRIMARY KEY ("transfer_id", "leg");

-- AlterTable transfers. The first schema only had credits: the balance after each
-- is the running sum of the tenant's credits, and the hash is the one
-- src/domain/fingerprint.ts computes for a credit.
DROP INDEX "transfers_tenant_id_created_at_idx";
ALTER TABLE "transfers" ADD COLUMN     "available_after" BIGINT,
ADD COLUMN     "held_after" BIGINT,
ADD COLUMN     "hold_id" TEXT,
ADD COLUMN     "request_hash" TEXT,
ADD COLUMN     "seq" BIGSERIAL NOT NULL,
ALTER COLUMN "reason" SET DEFAULT '';
UPDATE "transfers" t SET
  "seq" = n."seq",
  "available_after" = n."running",
  "held_after" = 0,
  "request_hash" = encode(sha256(convert_to(concat_ws(E'\n', t."kind", t."tenant_id", t."units"::text, t."reason"), 'UTF8')), 'hex')
FROM (
  SELECT "id",
         row_number() OVER (ORDER BY "created_at", "id") AS "seq",
         sum("units") OVER (PARTITION BY "tenant_id" ORDER BY "created_at", "id") AS "running"
  FROM "transfers"
) n
WHERE n."id" = t."id";
SELECT setval(pg_get_serial_sequence('"transfers"', 'seq'), COALESCE((SELECT max("seq") FROM "transfers"), 1), (SELECT count(*) > 0 FROM "transfers"));
ALTER TABLE "transfers" ALTER COLUMN "available_after" SET NOT NULL,
ALTER COLUMN "held_after" SET NOT NULL,
ALTER COLUMN "request_hash" SET NOT NULL;

-- CreateTable
CREATE TABLE "holds" (
    "id" TEXT NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "units" BIGINT NOT NULL,
    "status" TEXT NOT NULL,
    "captured_units" BIGINT,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "settled_by" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "settled_at" TIMESTAMPTZ(3),

    CONSTRAINT "holds_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "holds_tenant_id_status_idx" ON "holds"("tenant_id", "status");

-- CreateIndex
CREATE INDEX "transfers_tenant_id_seq_idx" ON "transfers"("tenant_id", "seq");

-- AddForeignKey
ALTER TABLE "transfers" ADD CONSTRAINT "transfers_hold_id_fkey" FOREIGN KEY ("hold_id") REFERENCES "holds"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "holds" ADD CONSTRAINT "holds_settled_by_fkey" FOREIGN KEY ("settled_by") REFERENCES "transfers"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- Second line of defence (not expressible in Prisma; the drift check compares models only).
-- Balances never go negative; every value is one the code knows.
ALTER TABLE "accounts" ADD CONSTRAINT "accounts_available_nonnegative" CHECK ("available" >= 0),
ADD CONSTRAINT "accounts_held_nonnegative" CHECK ("held" >= 0);
ALTER TABLE "transfers" ADD CONSTRAINT "transfers_kind_valid" CHECK ("kind" IN ('credit', 'reserve', 'capture', 'void')),
ADD CONSTRAINT "transfers_units_nonnegative" CHECK ("units" >= 0),
ADD CONSTRAINT "transfers_after_nonnegative" CHECK ("available_after" >= 0 AND "held_after" >= 0),
ADD CONSTRAINT "transfers_hold_iff_not_credit" CHECK (("kind" = 'credit') = ("hold_id" IS NULL));
ALTER TABLE "entries" ADD CONSTRAINT "entries_account_valid" CHECK ("account" IN ('available', 'held', 'funding', 'revenue')),
ADD CONSTRAINT "entries_units_nonzero" CHECK ("units" <> 0);
ALTER TABLE "holds" ADD CONSTRAINT "holds_status_valid" CHECK ("status" IN ('open', 'captured', 'voided')),
ADD CONSTRAINT "holds_units_positive" CHECK ("units" > 0),
ADD CONSTRAINT "holds_settled_iff_not_open" CHECK (("status" = 'open') = ("settled_by" IS NULL) AND ("status" = 'open') = ("settled_at" IS NULL)),
ADD CONSTRAINT "holds_captured_units_valid" CHECK (("status" = 'captured') = ("captured_units" IS NOT NULL) AND ("captured_units" IS NULL OR "captured_units" BETWEEN 0 AND "units"));

-- The journal is append-only: transfers and entries are never changed or deleted.
CREATE FUNCTION "ledger_append_only"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'ledger: % is append-only (% refused)', TG_TABLE_NAME, TG_OP USING ERRCODE = 'restrict_violation';
END;
$$;
CREATE TRIGGER "transfers_append_only" BEFORE UPDATE OR DELETE ON "transfers" FOR EACH ROW EXECUTE FUNCTION "ledger_append_only"();
CREATE TRIGGER "entries_append_only" BEFORE UPDATE OR DELETE ON "entries" FOR EACH ROW EXECUTE FUNCTION "ledger_append_only"();

-- A hold changes once, from open to captured or voided, and is never deleted.
CREATE FUNCTION "ledger_hold_settles_once"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    RAISE EXCEPTION 'ledger: holds are never deleted' USING ERRCODE = 'restrict_violation';
  END IF;
  IF OLD."status" <> 'open' OR NEW."status" = 'open'
     OR NEW."id" <> OLD."id" OR NEW."tenant_id" <> OLD."tenant_id" OR NEW."units" <> OLD."units"
     OR NEW."expires_at" <> OLD."expires_at" OR NEW."created_at" <> OLD."created_at" THEN
    RAISE EXCEPTION 'ledger: hold % is % and cannot become %', OLD."id", OLD."status", NEW."status" USING ERRCODE = 'restrict_violation';
  END IF;
  RETURN NEW;
END;
$$;
CREATE TRIGGER "holds_settle_once" BEFORE UPDATE OR DELETE ON "holds" FOR EACH ROW EXECUTE FUNCTION "ledger_hold_settles_once"();

-- At commit, every transfer that received legs balances (and has at least two).
CREATE FUNCTION "ledger_transfer_balances"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  total BIGINT;
  legs INT;
BEGIN
  SELECT sum("units"), count(*) INTO total, legs FROM "entries" WHERE "transfer_id" = NEW."transfer_id";
  IF total <> 0 OR legs < 2 THEN
    RAISE EXCEPTION 'ledger: transfer % does not balance (% legs, sum %)', NEW."transfer_id", legs, total USING ERRCODE = 'check_violation';
  END IF;
  RETURN NULL;
END;
$$;
CREATE CONSTRAINT TRIGGER "entries_balance" AFTER INSERT ON "entries" DEFERRABLE INITIALLY DEFERRED
FOR EACH ROW EXECUTE FUNCTION "ledger_transfer_balances"();
