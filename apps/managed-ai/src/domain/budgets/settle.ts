import { GroupCommit } from "@gateway/db-kit";
import type { Statements } from "@gateway/events-runtime";
import type { ManagedAiContext } from "../context.js";
import type { SettledCounter } from "../ports.js";
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
  const rows = await ctx.store.budgets.settleRecordClaims(input.requestIds, input.orphans ?? false, input.orphanAfterSeconds ?? 300);
  for (const row of rows) await audit(ctx, row);
  return rows.length;
}

/**
 * Settles the claims of a request whose record lives in another service (a push
 * message, docs/decisions/0024): its final charge is given (0 releases), and each
 * claim settles once, whoever calls first (the sender or messaging's recovery).
 */
export async function settleBudgetClaims({ ctx, input }: { ctx: ManagedAiContext; input: { requestId: string; finalUnits: bigint } }): Promise<number> {
  const rows = await ctx.store.budgets.settlePushClaims(input.requestId, input.finalUnits);
  for (const row of rows) await audit(ctx, row);
  return rows.length;
}

type Settled = SettledCounter;

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
    if (!row.threshold_marked && spent * 100n >= limit * 80n) await budgetCrossed({ ctx, input: { ...input, type: "budget.threshold" } });
    if (!row.reached_marked && spent >= limit) await budgetCrossed({ ctx, input: { ...input, type: "budget.reached" } });
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
  const open = await ctx.store.budgets.openClaimRequests(input.limit ?? 1000);
  return settleBudgets({ ctx, input: { requestIds: open, orphanAfterSeconds: input.orphanAfterSeconds } });
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
