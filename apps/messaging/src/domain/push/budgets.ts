import { AppError } from "@gateway/errors";
import type { PushBudget } from "../app-context.js";
import type { StoredPushConfig } from "../instances/config.js";

/**
 * The budgets a push send counts against (docs/decisions/0024): the API key's,
 * as the edge forwarded it, and the push instance's own (`config.budget_units`
 * per `config.budget_period`).
 */
export function pushBudgets(instance: { id: string; config: unknown }, key: { apiKeyId: string | null; units: bigint; period: string }): PushBudget[] {
  const budgets: PushBudget[] = [];
  if (key.apiKeyId && key.units > 0n) {
    if (key.period !== "day" && key.period !== "month") throw new AppError("invalid_request", "key_budget_period must be day or month");
    budgets.push({ scope: "key", id: key.apiKeyId, limitUnits: key.units, period: key.period });
  }
  const config = instance.config as StoredPushConfig;
  if (config.budget_units && config.budget_period) {
    budgets.push({ scope: "instance", id: instance.id, limitUnits: BigInt(config.budget_units), period: config.budget_period });
  }
  return budgets;
}
