import { GroupCommit } from "@gateway/db-kit";
import type { Statements } from "@gateway/events";
import type { ManagedAiContext } from "../context.js";
import type { BudgetPeriod } from "./period.js";
import { budgetCrossed } from "./events.js";

/**
 * Settles the budget claims of requests whose usage record has its end state,
 * exactly once (each claim changes only while `settled_at` is null): the
 * reservation leaves the counter and the record's charge is added to spent
 * (`completed`: `final_units`, at most the claim's reservation; `failed`: 0). A
 * managed charge never exceeds its reservation; a byok record's exact estimate may
 * (its provider was asked for more than the cap, or counts differently), and counting
 * that excess would pass a limit every concurrent claim was admitted under (issue 40). A claim without a record (the
 * request was refused after its budgets were reserved, or died before its
 * record was written) is released when `orphans` says so or once it is older
 * than `orphanAfterSeconds`. Records still `reserved` or in `review` keep
 * their claims: their reservations still count, as their holds do.
 * Crossing 80 % or 100 % of a limit is audited once per period.
 */
export async function settleBudgets({
  ctx,
  input,
}: {
  ctx: ManagedAiContext;
  input: { requestIds: string[]; orphans?: boolean; orphanAfterSeconds?: number };
}): Promise<number> {
  if (input.requestIds.length === 0) return 0;
  const rows = await ctx.sql.query<Settled>(
    `WITH due AS (
       SELECT c.request_id, c.scope, CASE WHEN r.status = 'completed' THEN least(COALESCE(r.final_units, 0), c.units) ELSE 0 END AS final_units
       FROM budget_claims c LEFT JOIN usage_records r ON r.id = c.request_id
       WHERE c.request_id = ANY($1::text[]) AND c.settled_at IS NULL AND c.source = 'ai'
         AND (r.status IN ('completed', 'failed')
              OR (r.id IS NULL AND ($2::boolean OR c.created_at < now() - make_interval(secs => $3::int))))),
     ${SETTLE_DUE}`,
    [input.requestIds, input.orphans ?? false, input.orphanAfterSeconds ?? 300],
  );
  for (const row of rows) await audit(ctx, row);
  return rows.length;
}

/**
 * The part both settlements share: the due claims (request_id, scope, final_units) are
 * marked settled once each, summed per counter (an UPDATE ... FROM changes a row once),
 * and moved from reserved to spent; answers the counters as they now are.
 */
const SETTLE_DUE = `claims AS (
       UPDATE budget_claims c SET settled_at = now(), final_units = due.final_units
       FROM due WHERE c.request_id = due.request_id AND c.scope = due.scope AND c.settled_at IS NULL
       RETURNING c.request_id, c.tenant_id, c.scope, c.scope_id, c.period, c.period_start, c.limit_units, c.units, c.final_units, c.created_at),
     per_counter AS (
       SELECT scope, scope_id, period_start, min(tenant_id) AS tenant_id, min(period) AS period,
         (array_agg(limit_units ORDER BY created_at DESC))[1] AS limit_units, sum(units) AS units, sum(final_units) AS final_units,
         (array_agg(request_id ORDER BY created_at DESC))[1] AS request_id
       FROM claims GROUP BY scope, scope_id, period_start)
     UPDATE budget_counters b SET reserved_units = b.reserved_units - p.units, spent_units = b.spent_units + p.final_units
     FROM per_counter p WHERE b.scope = p.scope AND b.scope_id = p.scope_id AND b.period_start = p.period_start
     RETURNING p.request_id, p.tenant_id, b.scope, b.scope_id, p.period, b.period_start, p.limit_units::text, b.spent_units::text,
       b.threshold_at IS NOT NULL AS threshold_marked, b.reached_at IS NOT NULL AS reached_marked`;

/**
 * Settles the claims of a request whose record lives in another service (a push
 * message, docs/decisions/0024): its final charge is given (0 releases), and each
 * claim settles once, whoever calls first (the sender or messaging's recovery).
 */
export async function settleBudgetClaims({ ctx, input }: { ctx: ManagedAiContext; input: { requestId: string; finalUnits: bigint } }): Promise<number> {
  const rows = await ctx.sql.query<Settled>(
    `WITH due AS (
       SELECT request_id, scope, $2::bigint AS final_units FROM budget_claims
       WHERE request_id = $1 AND settled_at IS NULL AND source = 'push'),
     ${SETTLE_DUE}`,
    [input.requestId, input.finalUnits.toString()],
  );
  for (const row of rows) await audit(ctx, row);
  return rows.length;
}

type Settled = {
  /** The newest request settled on the counter: the one whose charge crossed a threshold, if any did. */
  request_id: string;
  tenant_id: string;
  scope: "key" | "instance";
  scope_id: string;
  period: BudgetPeriod;
  period_start: Date;
  limit_units: string;
  spent_units: string;
  threshold_marked: boolean;
  reached_marked: boolean;
};

async function audit(ctx: ManagedAiContext, row: Settled): Promise<void> {
  const limit = BigInt(row.limit_units);
  const spent = BigInt(row.spent_units);
  const input = {
    tenantId: row.tenant_id,
    budget: { scope: row.scope, id: row.scope_id, limitUnits: limit, period: row.period },
    periodStart: new Date(row.period_start),
    spentUnits: spent,
    // Explicit: a group-committed settlement runs in whichever request's context started the batch.
    requestId: row.request_id,
  };
  try {
    if (!row.threshold_marked && spent * 100n >= limit * 80n) await budgetCrossed(ctx, "budget.threshold", input);
    if (!row.reached_marked && spent >= limit) await budgetCrossed(ctx, "budget.reached", input);
  } catch (err) {
    ctx.logger.warn({ err, scope: row.scope, scope_id: row.scope_id }, "could not record a budget event");
  }
}

/**
 * The sweep (run with the reconciler's passes): claims still open whose
 * records have since reached an end state (a review released by an operator or
 * finished by the reconciler, a settlement whose budget step was lost in a
 * crash), and claims without a record older than `orphanAfterSeconds`.
 * Oldest first, at most `limit` a pass.
 */
export async function sweepBudgetClaims({ ctx, input }: { ctx: ManagedAiContext; input: { limit?: number; orphanAfterSeconds?: number } }): Promise<number> {
  const open = await ctx.sql.query<{ request_id: string }>(
    `SELECT DISTINCT request_id FROM (SELECT request_id FROM budget_claims WHERE settled_at IS NULL AND source = 'ai' ORDER BY created_at LIMIT $1) c`,
    [input.limit ?? 1000],
  );
  return settleBudgets({ ctx, input: { requestIds: open.map((r) => r.request_id), orphanAfterSeconds: input.orphanAfterSeconds } });
}

/**
 * The request path's settlements, group-committed: the claims of requests that
 * end while a settlement statement is in flight are settled together by the
 * next one (one statement for the batch; each claim still once). Kept per
 * statements object, like the reservations' writer.
 */
const settlers = new WeakMap<Statements, GroupCommit<string, void>>();
export function settleBudgetsOf(ctx: ManagedAiContext, requestId: string): Promise<void> {
  let settler = settlers.get(ctx.sql);
  if (!settler) {
    settler = new GroupCommit<string, void>({
      maxBatch: 200,
      run: async (requestIds) => {
        await settleBudgets({ ctx, input: { requestIds } });
        return requestIds.map(() => undefined);
      },
    });
    settlers.set(ctx.sql, settler);
  }
  return settler.submit(requestId);
}
