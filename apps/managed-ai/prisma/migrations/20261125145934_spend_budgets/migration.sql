-- AlterTable
ALTER TABLE "usage_records" ADD COLUMN     "mode" TEXT NOT NULL DEFAULT 'managed';

-- CreateTable
CREATE TABLE "budget_counters" (
    "scope" TEXT NOT NULL,
    "scope_id" TEXT NOT NULL,
    "period_start" TIMESTAMPTZ(3) NOT NULL,
    "spent_units" BIGINT NOT NULL DEFAULT 0,
    "reserved_units" BIGINT NOT NULL DEFAULT 0,
    "threshold_at" TIMESTAMPTZ(3),
    "reached_at" TIMESTAMPTZ(3),

    CONSTRAINT "budget_counters_pkey" PRIMARY KEY ("scope","scope_id","period_start")
);

-- CreateTable
CREATE TABLE "budget_claims" (
    "request_id" TEXT NOT NULL,
    "source" TEXT NOT NULL DEFAULT 'ai',
    "tenant_id" TEXT NOT NULL,
    "scope" TEXT NOT NULL,
    "scope_id" TEXT NOT NULL,
    "period" TEXT NOT NULL,
    "period_start" TIMESTAMPTZ(3) NOT NULL,
    "limit_units" BIGINT NOT NULL,
    "units" BIGINT NOT NULL,
    "final_units" BIGINT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "settled_at" TIMESTAMPTZ(3),

    CONSTRAINT "budget_claims_pkey" PRIMARY KEY ("request_id","scope")
);

-- CreateIndex
CREATE INDEX "budget_claims_settled_at_created_at_idx" ON "budget_claims"("settled_at", "created_at");

-- Reserves p_units against every budget of one request, all or none, in one
-- round trip (docs/decisions/0024). Counter rows are created when missing and
-- locked in (scope, scope_id) order, so concurrent requests never deadlock;
-- the first budget without room for p_units is answered (nothing changes);
-- otherwise one claim per budget is written and the counters' reservations
-- grow. A replay (claims already there) changes nothing.
CREATE FUNCTION budget_reserve(p_request text, p_tenant text, p_scopes text[], p_ids text[], p_periods text[], p_starts timestamptz[], p_limits bigint[], p_units bigint, p_source text)
RETURNS TABLE (refused_scope text, spent_units bigint, reserved_units bigint)
LANGUAGE plpgsql AS $$
DECLARE
  c record;
BEGIN
  INSERT INTO budget_counters (scope, scope_id, period_start)
  SELECT u.s, u.id, u.st FROM unnest(p_scopes, p_ids, p_starts) AS u(s, id, st) ORDER BY u.s, u.id
  ON CONFLICT DO NOTHING;
  FOR c IN
    SELECT b.scope, b.spent_units AS spent, b.reserved_units AS reserved, u.lim
    FROM unnest(p_scopes, p_ids, p_starts, p_limits) AS u(s, id, st, lim)
    JOIN budget_counters b ON b.scope = u.s AND b.scope_id = u.id AND b.period_start = u.st
    ORDER BY b.scope, b.scope_id
    FOR UPDATE OF b
  LOOP
    IF c.spent + c.reserved + p_units > c.lim THEN
      IF NOT EXISTS (SELECT 1 FROM budget_claims WHERE request_id = p_request) THEN
        RETURN QUERY SELECT c.scope, c.spent, c.reserved;
        RETURN;
      END IF;
    END IF;
  END LOOP;
  WITH ins AS (
    INSERT INTO budget_claims (request_id, source, tenant_id, scope, scope_id, period, period_start, limit_units, units)
    SELECT p_request, p_source, p_tenant, u.s, u.id, u.p, u.st, u.lim, p_units
    FROM unnest(p_scopes, p_ids, p_periods, p_starts, p_limits) AS u(s, id, p, st, lim)
    ON CONFLICT DO NOTHING
    RETURNING scope, scope_id, period_start)
  UPDATE budget_counters b SET reserved_units = b.reserved_units + p_units
  FROM ins WHERE b.scope = ins.scope AND b.scope_id = ins.scope_id AND b.period_start = ins.period_start;
END $$;

-- byok records (docs/decisions/0025) hold nothing: their charge is the customer
-- provider's, which an estimate does not bound.
ALTER TABLE "usage_records"
  DROP CONSTRAINT "usage_records_final_units_check",
  ADD CONSTRAINT "usage_records_final_units_check" CHECK ("final_units" IS NULL OR ("final_units" >= 0 AND ("final_units" <= "reserved_units" OR "mode" = 'byok'))),
  ADD CONSTRAINT "usage_records_mode_check" CHECK ("mode" IN ('managed', 'byok'));
ALTER TABLE "budget_counters"
  ADD CONSTRAINT "budget_counters_units_check" CHECK ("spent_units" >= 0 AND "reserved_units" >= 0),
  ADD CONSTRAINT "budget_counters_scope_check" CHECK ("scope" IN ('key', 'instance'));
ALTER TABLE "budget_claims"
  ADD CONSTRAINT "budget_claims_units_check" CHECK ("units" >= 0 AND ("final_units" IS NULL OR "final_units" >= 0)),
  ADD CONSTRAINT "budget_claims_period_check" CHECK ("period" IN ('day', 'month')),
  ADD CONSTRAINT "budget_claims_source_check" CHECK ("source" IN ('ai', 'push'));
