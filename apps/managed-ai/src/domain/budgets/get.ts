import { z } from "zod";
import { AppError, parseInput } from "@gateway/errors";
import { NonNegativeUnits, PositiveUnits } from "@gateway/contract";
import type { ManagedAiContext } from "../context.js";
import { ResourceId } from "../schemas.js";
import type { Budget, BudgetView } from "./budget.js";
import { MAX_BUDGET_UNITS } from "./input.js";
import { BUDGET_PERIODS } from "./period.js";
import { reserveBudgets } from "./reserve.js";
import { settleBudgetClaims } from "./settle.js";
import { viewBudgets } from "./view.js";

const Units = PositiveUnits.refine((v) => v <= MAX_BUDGET_UNITS, "limit_units must be 1..2^53-1");

export const GetBudgetsInput = z.object({
  budgets: z.array(z.object({ scope: z.enum(["key", "instance"]), id: ResourceId, limit_units: Units, period: z.enum(BUDGET_PERIODS) })).max(500),
});

const BudgetRefs = GetBudgetsInput.shape.budgets;

export const ReserveForInput = z.object({
  request_id: ResourceId,
  tenant_id: ResourceId,
  budgets: BudgetRefs.min(1),
  units: NonNegativeUnits,
});

/** Counts another service's request (a push message) against the budgets it names, all or none (409 with `budget`). */
export async function reserveBudgetsFor({
  ctx,
  input,
}: {
  ctx: ManagedAiContext;
  input: {
    request_id: string;
    tenant_id: string;
    budgets: { scope: string; id: string; limit_units: string | number; period: string }[];
    units: string | number;
  };
}): Promise<void> {
  const q = parseInput(ReserveForInput, input);
  await reserveBudgets({
    ctx,
    input: {
      requestId: q.request_id,
      tenantId: q.tenant_id,
      budgets: q.budgets.map((b) => ({ scope: b.scope, id: b.id, limitUnits: b.limit_units, period: b.period })),
      units: q.units,
      source: "push",
    },
  });
}

export const SettleForInput = z.object({
  request_id: ResourceId,
  final_units: NonNegativeUnits,
});

/** Settles what `reserveBudgetsFor` claimed at the request's final charge, once. */
export async function settleBudgetsFor({
  ctx,
  input,
}: {
  ctx: ManagedAiContext;
  input: { request_id: string; final_units: string | number };
}): Promise<number> {
  const q = parseInput(SettleForInput, input);
  return settleBudgetClaims({ ctx, input: { requestId: q.request_id, finalUnits: q.final_units } });
}

/** The current period of each budget named (keys' budgets live in the edge, which names them with their limits). */
export async function getBudgets({
  ctx,
  input,
}: {
  ctx: ManagedAiContext;
  input: { budgets: { scope: string; id: string; limit_units: string | number; period: string }[] };
}): Promise<BudgetView[]> {
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
