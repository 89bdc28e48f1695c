import { z } from "zod";
import type { managedAi } from "@gateway/protos";
import { PositiveUnitsNumber, unitsToNumber } from "@gateway/contract";

/** A spend budget on a key or an instance (CONTRACT.md section 3b, docs/decisions/0024): both fields or neither. */
export const BudgetFields = {
  budget_units: PositiveUnitsNumber.optional().describe("Spend budget: units of USD 0.0001 per budget_period; send with budget_period. Absent: no budget."),
  budget_period: z.enum(["day", "month"]).optional().describe("The budget's UTC period; send with budget_units."),
};

/** Refinement: budget_units and budget_period come together. */
export function bothOrNeither(
  value: { budget_units?: number | null | undefined; budget_period?: string | null | undefined },
  ctx: z.RefinementCtx,
  path: (string | number)[] = [],
): void {
  const units = value.budget_units !== undefined && value.budget_units !== null;
  const period = value.budget_period !== undefined && value.budget_period !== null;
  if (units !== period)
    ctx.addIssue({
      code: "custom",
      path: [...path, units ? "budget_period" : "budget_units"],
      message: "send budget_units and budget_period together, or neither",
    });
}

export const BudgetState = z
  .object({
    limit_units: z.number().int(),
    spent_units: z.number().int().describe("Final charges settled in the current period."),
    reserved_units: z.number().int().describe("Held by requests in flight."),
    period: z.enum(["day", "month"]),
    resets_at: z.string().describe("When the current period ends (UTC)."),
  })
  .nullable()
  .describe("The spend budget's current period; null: no budget.");
export type BudgetState = z.infer<typeof BudgetState>;

export function budgetJson(b: managedAi.BudgetState__Output | null | undefined): BudgetState {
  if (!b) return null;
  return {
    limit_units: unitsToNumber(b.limit_units),
    spent_units: unitsToNumber(b.spent_units),
    reserved_units: unitsToNumber(b.reserved_units),
    period: b.period as "day" | "month",
    resets_at: b.resets_at,
  };
}
