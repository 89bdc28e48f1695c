import { newId } from "@gateway/contract/ids";
import type { JobsContext } from "../context.js";
import { queueNotices } from "../account-webhooks/notices.js";

export type BalanceCheck = "skipped" | "above" | "below" | "crossed";

/**
 * Checks one tenant's available balance against its threshold (docs/decisions/0210).
 * The balance is the ledger's view (GetBalance: the account and the reports of its
 * allotments), read while this tenant's checks are serialised by an advisory lock,
 * so every replica's checks apply in the order they read: a crossing is seen once.
 * Going from at-or-above to below queues `balance.low` (one event id for every
 * subscribed webhook) and audits `account.balance_low`; at or above again re-arms it.
 * The check also marks as done the ledger events that asked for it (`due_seq`).
 */
export async function checkBalance({ ctx, input }: { ctx: JobsContext; input: { tenantId: string } }): Promise<BalanceCheck> {
  return ctx.transact(async (tx, emit) => {
    await tx.$executeRawUnsafe(`SELECT 1 FROM (SELECT pg_advisory_xact_lock(hashtext('account_alerts'), hashtext($1))) AS locked`, input.tenantId);
    const [row] = await tx.$queryRawUnsafe<{ balance_low_units: bigint | null; below: boolean; due_seq: bigint; checked_seq: bigint }[]>(
      `SELECT balance_low_units, below, due_seq, checked_seq FROM account_alerts WHERE tenant_id = $1`,
      input.tenantId,
    );
    if (!row || row.due_seq <= row.checked_seq) return "skipped";
    const threshold = row.balance_low_units;
    let below = false;
    let crossed = false;
    if (threshold !== null) {
      const available = await ctx.accounts.availableUnits(input.tenantId);
      below = available < threshold;
      crossed = below && !row.below;
      if (crossed) {
        const data = { available_units: Number(available), threshold_units: Number(threshold) };
        await queueNotices(tx, [{ tenantId: input.tenantId, eventId: newId("evt"), event: "balance.low", data }]);
        await emit("account.balance_low", { tenant_id: input.tenantId, available_units: available.toString(), threshold_units: threshold.toString() });
      }
    }
    await tx.$executeRawUnsafe(
      `UPDATE account_alerts SET below = $2, checked_seq = GREATEST(checked_seq, $3::bigint), updated_at = now() WHERE tenant_id = $1`,
      input.tenantId,
      below,
      row.due_seq.toString(),
    );
    return crossed ? "crossed" : below ? "below" : "above";
  });
}
