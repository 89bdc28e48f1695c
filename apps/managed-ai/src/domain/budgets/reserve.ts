import { AppError } from "@gateway/errors";
import type { ManagedAiContext } from "../context.js";
import type { Budget } from "./budget.js";
import { budgetCrossed } from "./events.js";
import { periodBounds } from "./period.js";

/**
 * Counts a request's reservation against every budget that applies, all or
 * none, group-committed (`budget_reserve_batch`, docs/decisions/0024): a budget
 * whose spent + reserved + this reservation would pass its limit refuses the
 * request with 409 `conflict` and `budget: {scope, limit_units, spent_units,
 * period, resets_at}`; nothing is reserved then (a refusal by a budget whose
 * spending is at or above its limit, e.g. just lowered, is audited as
 * `budget.reached` once per period). No budgets: nothing is read or written.
 */
export async function reserveBudgets({
  ctx,
  input,
}: {
  ctx: ManagedAiContext;
  /** `source`: ai (settled from the usage record here, the default) | push (settled by messaging with the message's charge). */
  input: { requestId: string; tenantId: string; budgets: Budget[]; units: bigint; now?: Date; source?: "ai" | "push" };
}): Promise<void> {
  if (input.budgets.length === 0) return;
  const now = input.now ?? new Date();
  const refused = await ctx.store.budgets.reserve({
    requestId: input.requestId,
    tenantId: input.tenantId,
    counters: input.budgets.map((b) => ({ ...b, periodStart: periodBounds(b.period, now).start })),
    units: input.units,
    source: input.source ?? "ai",
  });
  if (!refused) return;
  const i = refused.index;
  const budget = input.budgets[i]!;
  const bounds = periodBounds(budget.period, now);
  const spent = refused.spentUnits;
  // A budget lowered to (or below) what is spent is reached even though no settlement crossed it.
  if (spent >= budget.limitUnits) {
    await budgetCrossed({
      ctx,
      input: {
        type: "budget.reached",
        tenantId: input.tenantId,
        budget,
        periodStart: bounds.start,
        spentUnits: spent,
        requestId: input.requestId,
      },
    }).catch((err: unknown) => ctx.logger.warn({ err, request_id: input.requestId }, "could not record budget.reached"));
  }
  throw new AppError(
    "conflict",
    `The ${budget.scope} budget has no room for this request: ${spent} of ${budget.limitUnits} units spent this ${budget.period}, ${refused.reservedUnits} held by requests in flight, this one needs ${input.units}.`,
    {
      extra: {
        budget: {
          scope: budget.scope,
          limit_units: Number(budget.limitUnits),
          spent_units: Number(spent),
          reserved_units: Number(refused.reservedUnits),
          period: budget.period,
          resets_at: bounds.resetsAt.toISOString(),
        },
      },
    },
  );
}
