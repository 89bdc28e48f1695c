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

-- Reserves a batch of requests (group-committed, docs/decisions/0024) against
-- their budgets, each request all or none, in one statement: missing counter rows
-- are created, every counter of the batch is locked once in (scope, scope_id,
-- period_start) order (so concurrent batches never deadlock), then requests are
-- taken in order: the first of a request's budgets without room for its units
-- refuses it (a row answered, nothing written for it); otherwise one claim per
-- budget is written and the counters' reservations grow. A request whose claims
-- exist already (a replay) changes nothing and is not refused.
-- Budgets come as parallel arrays, grouped by request in request order: request r
-- has the budgets p_first[r] .. p_first[r] + p_count[r] - 1 (1-based).
CREATE FUNCTION budget_reserve_batch(p_requests text[], p_tenants text[], p_units bigint[], p_sources text[], p_first int[], p_count int[],
  b_scopes text[], b_ids text[], b_periods text[], b_starts timestamptz[], b_limits bigint[])
RETURNS TABLE (request_index int, refused_scope text, spent_units bigint, reserved_units bigint)
LANGUAGE plpgsql AS $$
DECLARE
  r int;
  lo int;
  hi int;
  c record;
  refused boolean;
BEGIN
  INSERT INTO budget_counters (scope, scope_id, period_start)
  SELECT DISTINCT u.s, u.id, u.st FROM unnest(b_scopes, b_ids, b_starts) AS u(s, id, st) ORDER BY 1, 2, 3
  ON CONFLICT DO NOTHING;
  PERFORM 1 FROM budget_counters b
    JOIN (SELECT DISTINCT u.s, u.id, u.st FROM unnest(b_scopes, b_ids, b_starts) AS u(s, id, st)) k
      ON b.scope = k.s AND b.scope_id = k.id AND b.period_start = k.st
    ORDER BY b.scope, b.scope_id, b.period_start
    FOR UPDATE OF b;
  FOR r IN 1 .. coalesce(array_length(p_requests, 1), 0) LOOP
    CONTINUE WHEN EXISTS (SELECT 1 FROM budget_claims WHERE request_id = p_requests[r]);
    lo := p_first[r];
    hi := p_first[r] + p_count[r] - 1;
    refused := false;
    FOR c IN
      SELECT b.scope, b.spent_units AS spent, b.reserved_units AS reserved, u.lim
      FROM unnest(b_scopes[lo:hi], b_ids[lo:hi], b_starts[lo:hi], b_limits[lo:hi]) AS u(s, id, st, lim)
      JOIN budget_counters b ON b.scope = u.s AND b.scope_id = u.id AND b.period_start = u.st
      ORDER BY b.scope, b.scope_id
    LOOP
      IF c.spent + c.reserved + p_units[r] > c.lim THEN
        request_index := r;
        refused_scope := c.scope;
        spent_units := c.spent;
        reserved_units := c.reserved;
        RETURN NEXT;
        refused := true;
        EXIT;
      END IF;
    END LOOP;
    CONTINUE WHEN refused;
    INSERT INTO budget_claims (request_id, source, tenant_id, scope, scope_id, period, period_start, limit_units, units)
    SELECT p_requests[r], p_sources[r], p_tenants[r], u.s, u.id, u.p, u.st, u.lim, p_units[r]
    FROM unnest(b_scopes[lo:hi], b_ids[lo:hi], b_periods[lo:hi], b_starts[lo:hi], b_limits[lo:hi]) AS u(s, id, p, st, lim);
    UPDATE budget_counters b SET reserved_units = b.reserved_units + p_units[r]
    FROM unnest(b_scopes[lo:hi], b_ids[lo:hi], b_starts[lo:hi]) AS u(s, id, st)
    WHERE b.scope = u.s AND b.scope_id = u.id AND b.period_start = u.st;
  END LOOP;
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
