import type { ManagedAiContext } from "../context.js";
import type { Budget, BudgetView } from "./budget.js";
import { periodBounds } from "./period.js";

/** The current period's spending of each budget, in one read (absent counters: nothing spent yet). */
export async function viewBudgets({ ctx, input }: { ctx: ManagedAiContext; input: { budgets: Budget[]; now?: Date } }): Promise<BudgetView[]> {
  if (input.budgets.length === 0) return [];
  const now = input.now ?? new Date();
  const bounds = input.budgets.map((b) => periodBounds(b.period, now));
  const counters = await ctx.store.budgets.readCounters(input.budgets.map((b, i) => ({ scope: b.scope, id: b.id, periodStart: bounds[i]!.start })));
  return input.budgets.map((b, i) => ({
    limit_units: b.limitUnits,
    spent_units: counters[i]!.spentUnits,
    reserved_units: counters[i]!.reservedUnits,
    period: b.period,
    resets_at: bounds[i]!.resetsAt.toISOString(),
  }));
}
