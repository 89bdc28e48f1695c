import { outboxInsertFrom, outboxRow } from "@gateway/events";
import type { ManagedAiContext } from "../context.js";
import type { Budget } from "./budget.js";

/**
 * Audits a budget crossing 80 % (`budget.threshold`) or 100 % (`budget.reached`)
 * once per budget and period: the counter row's mark and the event are one
 * statement, and only the writer that sets the mark writes the event.
 */
export async function budgetCrossed(
  ctx: ManagedAiContext,
  type: "budget.threshold" | "budget.reached",
  input: { tenantId: string; budget: Budget; periodStart: Date; spentUnits: bigint; requestId?: string },
): Promise<boolean> {
  const column = type === "budget.threshold" ? "threshold_at" : "reached_at";
  const event = outboxRow(
    type,
    {
      tenant_id: input.tenantId,
      scope: input.budget.scope,
      scope_id: input.budget.id,
      period: input.budget.period,
      period_start: input.periodStart.toISOString(),
      limit_units: input.budget.limitUnits.toString(),
      spent_units: input.spentUnits.toString(),
    },
    input.requestId ? { requestId: input.requestId } : {},
  );
  const rows = await ctx.sql.query(
    `WITH upd AS (
       UPDATE budget_counters SET ${column} = now()
       WHERE scope = $1 AND scope_id = $2 AND period_start = $3 AND ${column} IS NULL
       RETURNING 1),
     ev AS (${outboxInsertFrom(4, "upd")})
     SELECT 1 FROM upd`,
    [input.budget.scope, input.budget.id, input.periodStart.toISOString(), ...event.values],
  );
  if (rows.length > 0) ctx.sql.eventsWritten();
  return rows.length > 0;
}
