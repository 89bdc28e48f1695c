import type { ManagedAiContext } from "../context.js";
import type { ServiceInstance } from "../rows.js";
import { configOf } from "../instances/view.js";
import type { Budget } from "./budget.js";

/** An instance's own budget (`config.budget_units` per `config.budget_period`), or null. */
export function instanceBudget(instance: ServiceInstance): Budget | null {
  const config = configOf(instance);
  if (!config.budget_units || !config.budget_period) return null;
  return { scope: "instance", id: instance.id, limitUnits: BigInt(config.budget_units), period: config.budget_period };
}

/**
 * Every budget a request counts against: its key's (as the edge forwarded it
 * with the request, so a change on the key applies to its next request) and its
 * instance's (from the catalog the plan just read, flushed on every replica by
 * an instance write).
 */
export async function applicableBudgets({
  ctx,
  input: request,
}: {
  ctx: ManagedAiContext;
  input: { tenantId: string; serviceAlias: string; keyBudget?: Budget | null | undefined };
}): Promise<Budget[]> {
  const budgets: Budget[] = [];
  if (request.keyBudget) budgets.push(request.keyBudget);
  const instance = await ctx.catalog.instance(request.tenantId, request.serviceAlias);
  const own = instance ? instanceBudget(instance) : null;
  if (own) budgets.push(own);
  return budgets;
}
