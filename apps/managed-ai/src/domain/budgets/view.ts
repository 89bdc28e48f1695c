import type { ManagedAiContext } from "../context.js";
import type { Budget, BudgetView } from "./budget.js";
import { periodBounds } from "./period.js";

/** The current period's spending of each budget, in one read (absent counters: nothing spent yet). */
export async function viewBudgets({ ctx, input }: { ctx: ManagedAiContext; input: { budgets: Budget[]; now?: Date } }): Promise<BudgetView[]> {
  if (input.budgets.length === 0) return [];
  const now = input.now ?? new Date();
  const bounds = input.budgets.map((b) => periodBounds(b.period, now));
  const rows = await ctx.sql.query<{ i: number; spent_units: string; reserved_units: string }>(
    `SELECT u.i::int AS i, b.spent_units::text, b.reserved_units::text
     FROM unnest($1::text[], $2::text[], $3::timestamptz[]) WITH ORDINALITY AS u(s, id, st, i)
     JOIN budget_counters b ON b.scope = u.s AND b.scope_id = u.id AND b.period_start = u.st`,
    [input.budgets.map((b) => b.scope), input.budgets.map((b) => b.id), bounds.map((b) => b.start.toISOString())],
  );
  const byIndex = new Map(rows.map((r) => [r.i - 1, r]));
  return input.budgets.map((b, i) => ({
    limit_units: b.limitUnits,
    spent_units: BigInt(byIndex.get(i)?.spent_units ?? "0"),
    reserved_units: BigInt(byIndex.get(i)?.reserved_units ?? "0"),
    period: b.period,
    resets_at: bounds[i]!.resetsAt.toISOString(),
  }));
}
