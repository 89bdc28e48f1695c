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

/** When a UTC day or month that contains `now` ends (managed-ai's period rule, docs/decisions/0024). */
export function periodEnd(period: "day" | "month", now: Date): Date {
  return period === "day"
    ? new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1))
    : new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
}

/**
 * A key just created has spent nothing: its view is made here, without asking
 * managed-ai, so the one answer that shows the secret never fails after the key exists.
 */
export function withFreshBudget<K extends KeyView>(key: K, now = new Date()): Omit<K, "budget"> & { budget: BudgetState } {
  const b = key.budget;
  return {
    ...key,
    budget: b ? { limit_units: b.limit_units, spent_units: 0, reserved_units: 0, period: b.period, resets_at: periodEnd(b.period, now).toISOString() } : null,
  };
}
