import { AppError } from "@gateway/errors";
import type { ManagedAiContext } from "../../db.js";
import type { Budget } from "./budget.js";
import { budgetCrossed } from "./events.js";
import { periodBounds } from "./period.js";

/**
 * Counts a request's reservation against every budget that applies, all or
 * none, in one statement (`budget_reserve`, docs/decisions/0024): a budget
 * whose spent + reserved + this reservation would pass its limit refuses the
 * request with 409 `conflict` and `budget: {scope, limit_units, spent_units,
 * period, resets_at}`; nothing is reserved then (a refusal by a budget whose
 * spending is at or above its limit, e.g. just lowered, is audited as
 * `budget.reached` once per period). No budgets: nothing is read or written.
 */
export async function reserveBudgets({
  ctx,
  input,
}: {
  ctx: ManagedAiContext;
  /** `source`: ai (settled from the usage record here, the default) | push (settled by messaging with the message's charge). */
  input: { requestId: string; tenantId: string; budgets: Budget[]; units: bigint; now?: Date; source?: "ai" | "push" };
}): Promise<void> {
  if (input.budgets.length === 0) return;
  const now = input.now ?? new Date();
  const bounds = input.budgets.map((b) => periodBounds(b.period, now));
  const rows = await ctx.sql.query<{ refused_scope: string | null; spent_units: string; reserved_units: string }>(
    `SELECT refused_scope, spent_units::text, reserved_units::text FROM budget_reserve($1, $2, $3::text[], $4::text[], $5::text[], $6::timestamptz[], $7::bigint[], $8::bigint, $9)`,
    [
      input.requestId,
      input.tenantId,
      input.budgets.map((b) => b.scope),
      input.budgets.map((b) => b.id),
      input.budgets.map((b) => b.period),
      bounds.map((b) => b.start.toISOString()),
      input.budgets.map((b) => b.limitUnits.toString()),
      input.units.toString(),
      input.source ?? "ai",
    ],
  );
  const refused = rows[0];
  if (!refused?.refused_scope) return;
  const i = input.budgets.findIndex((b) => b.scope === refused.refused_scope);
  const budget = input.budgets[i]!;
  const spent = BigInt(refused.spent_units);
  // A budget lowered to (or below) what is spent is reached even though no settlement crossed it.
  if (spent >= budget.limitUnits) {
    await budgetCrossed(ctx, "budget.reached", {
      tenantId: input.tenantId,
      budget,
      periodStart: bounds[i]!.start,
      spentUnits: spent,
      requestId: input.requestId,
    }).catch((err: unknown) => ctx.logger.warn({ err, request_id: input.requestId }, "could not record budget.reached"));
  }
  throw new AppError(
    "conflict",
    `The ${budget.scope} budget has no room for this request: ${spent} of ${budget.limitUnits} units spent this ${budget.period}, ${refused.reserved_units} held by requests in flight, this one needs ${input.units}.`,
    {
      extra: {
        budget: {
          scope: budget.scope,
          limit_units: Number(budget.limitUnits),
          spent_units: Number(spent),
          reserved_units: Number(refused.reserved_units),
          period: budget.period,
          resets_at: bounds[i]!.resetsAt.toISOString(),
        },
      },
    },
  );
}
