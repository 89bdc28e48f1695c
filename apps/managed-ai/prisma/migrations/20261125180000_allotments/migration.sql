-- Allotments (docs/decisions/0028): a tenant's funds set aside in the ledger as one
-- pending transfer (an allotment hold), which metered requests claim in this
-- database, in the same group-committed statement that writes their usage record,
-- instead of each taking a hold of its own in the ledger.
--
-- An allotment row says what is promised out of its hold:
--   claimed: the reservations of its records in flight (and of records in review
--            whose hold is not carved out yet) plus the final charges of its
--            completed records (posted to the ledger or about to be);
--   carved:  the reservations moved out into holds of their own (records whose
--            outcome an operator decides);
--   frozen:  what was given back to available when it ran out (a request that did
--            not fit took it with its own hold).
-- free = units - claimed - carved - frozen; a claim never makes it negative.
CREATE TABLE "allotments" (
    "id" TEXT NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "state" TEXT NOT NULL,
    "hold_id" TEXT,
    "units" BIGINT NOT NULL,
    "claimed" BIGINT NOT NULL DEFAULT 0,
    "carved" BIGINT NOT NULL DEFAULT 0,
    "frozen" BIGINT NOT NULL DEFAULT 0,
    "version" BIGINT NOT NULL DEFAULT 0,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "last_claim_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "closed_at" TIMESTAMPTZ(3),

    CONSTRAINT "allotments_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "allotments_state_valid" CHECK ("state" IN ('opening', 'open', 'closing', 'closed')),
    CONSTRAINT "allotments_units_valid" CHECK ("units" > 0 AND "claimed" >= 0 AND "carved" >= 0 AND "frozen" >= 0
      AND "claimed" + "carved" + "frozen" <= "units"),
    CONSTRAINT "allotments_hold_known" CHECK ("state" = 'opening' OR "hold_id" IS NOT NULL)
);

-- At most one allotment of a tenant takes claims (or is being opened) at a time.
CREATE UNIQUE INDEX "allotments_live_key" ON "allotments"("tenant_id") WHERE "state" IN ('opening', 'open');
CREATE INDEX "allotments_state_updated_at_idx" ON "allotments"("state", "updated_at");

ALTER TABLE "usage_records" ADD COLUMN "allotment_id" TEXT;
-- The closing of an allotment reads its records.
CREATE INDEX "usage_records_allotment_id_idx" ON "usage_records"("allotment_id") WHERE "allotment_id" IS NOT NULL;

-- What a record claims of its allotment, by its state: a record with a hold of its own
-- (carved out) claims nothing; a completed one its final charge; a failed one nothing;
-- a reserved one, or one in review whose hold is not carved out yet, its reservation.
-- The one definition of it: the statements that settle records and the recount use it.
CREATE FUNCTION "allotment_claim"(p_status TEXT, p_hold_id TEXT, p_reserved BIGINT, p_final BIGINT) RETURNS BIGINT
LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE
    WHEN p_hold_id IS NOT NULL THEN 0
    WHEN p_status = 'completed' THEN coalesce(p_final, 0)
    WHEN p_status = 'failed' THEN 0
    ELSE p_reserved
  END
$$;

-- An allotment's claimed and carved units counted again from its records (after an
-- operator's or the reconciler's decision on one of them). The row is locked first,
-- so a concurrent claim or settlement (relative changes) applies after this count or
-- is already in it.
CREATE FUNCTION "allotment_recount"(p_id TEXT) RETURNS VOID LANGUAGE plpgsql AS $$
BEGIN
  PERFORM 1 FROM "allotments" WHERE "id" = p_id FOR UPDATE;
  UPDATE "allotments" a SET
    "claimed" = c."claimed", "carved" = c."carved", "version" = a."version" + 1, "updated_at" = now()
  FROM (
    SELECT coalesce(sum("allotment_claim"(r."status", r."hold_id", r."reserved_units", r."final_units")), 0) AS "claimed",
           coalesce(sum(CASE WHEN r."hold_id" IS NOT NULL THEN r."reserved_units" ELSE 0 END), 0) AS "carved"
    FROM "usage_records" r WHERE r."allotment_id" = p_id
  ) c
  WHERE a."id" = p_id;
END;
$$;
