import type { ManagedAiContext } from "../context.js";
import type { Budget } from "./budget.js";

/**
 * Audits a budget crossing 80 % (`budget.threshold`) or 100 % (`budget.reached`)
 * once per budget and period: the counter row's mark and the event are one
 * transaction, and only the writer that sets the mark emits the event.
 */
export async function budgetCrossed({
  ctx,
  input,
}: {
  ctx: ManagedAiContext;
  input: { type: "budget.threshold" | "budget.reached"; tenantId: string; budget: Budget; periodStart: Date; spentUnits: bigint; requestId?: string };
}): Promise<boolean> {
  const { type } = input;
  return ctx.transact(async (tx, emit) => {
    if (!(await ctx.store.budgets.markCrossing(tx, type === "budget.threshold" ? "threshold" : "reached", { ...input.budget, periodStart: input.periodStart })))
      return false;
    await emit(
      type,
      {
        tenant_id: input.tenantId,
        scope: input.budget.scope,
        scope_id: input.budget.id,
        period: input.budget.period,
        period_start: input.periodStart.toISOString(),
        limit_units: input.budget.limitUnits.toString(),
        spent_units: input.spentUnits.toString(),
      },
      input.requestId ? { requestId: input.requestId } : {},
    );
    return true;
  });
}
