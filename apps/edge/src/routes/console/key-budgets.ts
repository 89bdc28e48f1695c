import type { EdgeDeps } from "../../deps.js";
import type { KeyView } from "../../domain/keys/manage-keys.js";
import { budgetJson, type BudgetState } from "./budget.types.js";

/** Keys with their budgets' current periods, read from managed-ai in one call (keys without a budget cost nothing). */
export async function withKeyBudgets<K extends KeyView>(deps: EdgeDeps, keys: K[]): Promise<(Omit<K, "budget"> & { budget: BudgetState })[]> {
  const budgeted = keys.filter((k) => k.budget !== null);
  const states =
    budgeted.length === 0
      ? []
      : (
          await deps.services.managedAi.GetBudgets({
            budgets: budgeted.map((k) => ({ scope: "key", id: k.id, limit_units: String(k.budget!.limit_units), period: k.budget!.period })),
          })
        ).budgets;
  const byId = new Map(budgeted.map((k, i) => [k.id, states[i]]));
  return keys.map((k) => ({ ...k, budget: budgetJson(byId.get(k.id)) }));
}
