import { z } from "zod";
import { parseInput } from "@gateway/errors";
import { Id, NonNegativeUnits } from "@gateway/contract";
import type { JobsContext } from "../context.js";

export const GetAccountAlertsInput = z.object({ tenant_id: Id });
export type AccountAlertsView = { balanceLowUnits: bigint | null };

/** A tenant's alert settings; a tenant that never set any has none. */
export async function getAccountAlerts({
  ctx,
  input,
}: {
  ctx: Pick<JobsContext, "prisma">;
  input: z.input<typeof GetAccountAlertsInput>;
}): Promise<AccountAlertsView> {
  const q = parseInput(GetAccountAlertsInput, input);
  const row = await ctx.prisma.accountAlert.findUnique({ where: { tenantId: q.tenant_id } });
  return { balanceLowUnits: row?.balanceLowUnits ?? null };
}

export const PutAccountAlertsInput = z.object({
  tenant_id: Id,
  /** Absent or null: no balance alert. */
  balance_low_units: NonNegativeUnits.nullish(),
  actor: z.string().default(""),
});

/**
 * Sets (or, with null, removes) the balance threshold, and has the balance checked
 * against it at once: a balance already below a new threshold is a crossing, so
 * `balance.low` goes out once now (docs/decisions/0210).
 */
export async function putAccountAlerts({ ctx, input }: { ctx: JobsContext; input: z.input<typeof PutAccountAlertsInput> }): Promise<AccountAlertsView> {
  const q = parseInput(PutAccountAlertsInput, input);
  const units = q.balance_low_units ?? null;
  await ctx.transact(async (tx, emit) => {
    await tx.$executeRawUnsafe(
      `INSERT INTO account_alerts (tenant_id, balance_low_units, below, due_seq, checked_seq, updated_at)
       VALUES ($1, $2::bigint, false, CASE WHEN $2::bigint IS NULL THEN 0 ELSE 1 END, 0, now())
       ON CONFLICT (tenant_id) DO UPDATE SET
         balance_low_units = EXCLUDED.balance_low_units,
         below = account_alerts.below AND EXCLUDED.balance_low_units IS NOT NULL,
         due_seq = account_alerts.due_seq + 1,
         updated_at = now()`,
      q.tenant_id,
      units === null ? null : units.toString(),
    );
    await emit("account.alerts_changed", { tenant_id: q.tenant_id, balance_low_units: units === null ? null : units.toString(), actor: q.actor || null });
  });
  if (units !== null) ctx.accounts.kickBalanceChecks();
  return { balanceLowUnits: units };
}
