import { z } from "zod";
import { AppError, parseInput } from "@gateway/errors";
import type { ManagedAiContext } from "../../db.js";
import { ResourceId } from "../schemas.js";
import type { Budget, BudgetView } from "./budget.js";
import { MAX_BUDGET_UNITS } from "./input.js";
import { BUDGET_PERIODS } from "./period.js";
import { viewBudgets } from "./view.js";

const Units = z
  .union([z.string().regex(/^\d{1,19}$/), z.number().int().min(1)])
  .transform((v) => BigInt(v))
  .refine((v) => v > 0n && v <= MAX_BUDGET_UNITS, "limit_units must be 1..2^53-1");

export const GetBudgetsInput = z.object({
  budgets: z
    .array(z.object({ scope: z.enum(["key", "instance"]), id: ResourceId, limit_units: Units, period: z.enum(BUDGET_PERIODS) }))
    .max(500),
});

/** The current period of each budget named (keys' budgets live in the edge, which names them with their limits). */
export async function getBudgets({ ctx, input }: { ctx: ManagedAiContext; input: { budgets: { scope: string; id: string; limit_units: string | number; period: string }[] } }): Promise<BudgetView[]> {
  const q = parseInput(GetBudgetsInput, input);
  return viewBudgets({ ctx, input: { budgets: q.budgets.map((b) => ({ scope: b.scope, id: b.id, limitUnits: b.limit_units, period: b.period })) } });
}

/** The key's budget as the edge forwarded it with a request (0 and "": none). */
export function keyBudgetOf(req: { api_key_id: string; key_budget_units: string | number; key_budget_period: string }): Budget | null {
  const units = BigInt(req.key_budget_units || 0);
  if (units <= 0n || !req.api_key_id) return null;
  if (req.key_budget_period !== "day" && req.key_budget_period !== "month") {
    throw new AppError("invalid_request", "key_budget_period must be day or month");
  }
  return { scope: "key", id: req.api_key_id, limitUnits: units, period: req.key_budget_period };
}
