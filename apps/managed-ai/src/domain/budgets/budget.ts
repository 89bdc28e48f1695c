import type { BudgetPeriod } from "./period.js";

/** A budget that applies to a request: whose (a key or an instance), how much per period. */
export type Budget = {
  scope: "key" | "instance";
  /** The key id or the instance id. */
  id: string;
  limitUnits: bigint;
  period: BudgetPeriod;
};

/** A budget as views and refusals show it (CONTRACT.md section 3b). */
export type BudgetView = {
  limit_units: bigint;
  spent_units: bigint;
  /** What requests in flight hold against it (not in the contract's shape: an extra). */
  reserved_units: bigint;
  period: BudgetPeriod;
  resets_at: string;
};
