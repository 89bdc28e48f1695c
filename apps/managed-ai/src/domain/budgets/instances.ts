import type { ManagedAiContext } from "../context.js";
import type { InstanceView } from "../instances/view.js";
import type { Budget } from "./budget.js";
import { viewBudgets } from "./view.js";

/** Instance views with their budgets' current periods (one read for all of them). */
export async function withBudgets(ctx: ManagedAiContext, views: InstanceView[], now?: Date): Promise<InstanceView[]> {
  const budgeted = views.flatMap((v) =>
    v.config.budget_units && v.config.budget_period
      ? [{ view: v, budget: { scope: "instance", id: v.id, limitUnits: BigInt(v.config.budget_units), period: v.config.budget_period } satisfies Budget }]
      : [],
  );
  const states = await viewBudgets({ ctx, input: { budgets: budgeted.map((b) => b.budget), ...(now ? { now } : {}) } });
  const byId = new Map(budgeted.map((b, i) => [b.view.id, states[i]!]));
  return views.map((v) => ({ ...v, budget: byId.get(v.id) ?? null }));
}
