import { z } from "zod";
import { AppError } from "@gateway/errors";
import { NonNegativeUnits } from "@gateway/contract";
import { BUDGET_PERIODS, type BudgetPeriod } from "./period.js";

/** The largest budget: what JSON numbers carry exactly (2^53 - 1 units, about USD 900 billion). */
export const MAX_BUDGET_UNITS = 9_007_199_254_740_991n;

/** `budget_units` (> 0) and `budget_period` (day | month), both or neither; over gRPC 0 and "" mean neither. */
export const BudgetFields = {
  budget_units: NonNegativeUnits.refine((v) => v <= MAX_BUDGET_UNITS, "budget_units is too large").optional(),
  budget_period: z.union([z.enum(BUDGET_PERIODS), z.literal("")]).optional(),
};

export function checkBudgetPair(q: { budget_units?: bigint | undefined; budget_period?: BudgetPeriod | "" | undefined }): void {
  const hasUnits = q.budget_units !== undefined && q.budget_units > 0n;
  const hasPeriod = q.budget_period !== undefined && q.budget_period !== "";
  if (hasUnits !== hasPeriod) {
    throw new AppError("invalid_request", "send both config.budget_units (> 0) and config.budget_period (day | month), or neither", {
      extra: { param: hasUnits ? "budget_period" : "budget_units" },
    });
  }
}

/** The budget part of a stored config: nothing without a budget. */
export function budgetConfig(q: { budget_units?: bigint | undefined; budget_period?: BudgetPeriod | "" | undefined }): {
  budget_units?: string;
  budget_period?: BudgetPeriod;
} {
  if (!q.budget_units || !q.budget_period) return {};
  return { budget_units: q.budget_units.toString(), budget_period: q.budget_period };
}
