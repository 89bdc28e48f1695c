/** A spend budget's period: a UTC day or a UTC calendar month (CONTRACT.md section 3b). */
export type BudgetPeriod = "day" | "month";

export const BUDGET_PERIODS = ["day", "month"] as const;

/** The period that contains `now`: its start and when it resets (the next period's start). */
export function periodBounds(period: BudgetPeriod, now: Date): { start: Date; resetsAt: Date } {
  const y = now.getUTCFullYear();
  const m = now.getUTCMonth();
  if (period === "day") {
    const d = now.getUTCDate();
    return { start: new Date(Date.UTC(y, m, d)), resetsAt: new Date(Date.UTC(y, m, d + 1)) };
  }
  return { start: new Date(Date.UTC(y, m, 1)), resetsAt: new Date(Date.UTC(y, m + 1, 1)) };
}
