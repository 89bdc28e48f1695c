import type { EventEnvelope } from "@gateway/events";
import type { SqlExecutor } from "@gateway/events-runtime";
import { queueNotices, type AccountNotice } from "./notices.js";

/** Ledger movements: each may move a tenant's available balance (allotment reports ride with posts). */
const BALANCE_MOVES = new Set(["ledger.credited", "ledger.reserved", "ledger.captured", "ledger.voided", "ledger.posted", "ledger.released"]);

type Data = Record<string, unknown>;
const str = (v: unknown): string => (typeof v === "string" ? v : "");
const num = (v: unknown): number => Number(v);

/** When a budget period that started at `start` ends: the next UTC day or month. */
export function periodEnd(start: string, period: string): string {
  const t = new Date(start);
  if (period === "month") return new Date(Date.UTC(t.getUTCFullYear(), t.getUTCMonth() + 1, 1)).toISOString();
  return new Date(Date.UTC(t.getUTCFullYear(), t.getUTCMonth(), t.getUTCDate() + 1)).toISOString();
}

/** The webhook notice an event of the trail becomes, if any; its event id is the event's own. */
export function noticeOf(event: EventEnvelope): AccountNotice | null {
  const d = event.data as Data;
  const tenantId = str(d.tenant_id);
  if (!tenantId) return null;
  if (event.type === "budget.threshold" || event.type === "budget.reached") {
    const data = {
      scope: d.scope,
      id: d.scope_id,
      limit_units: num(d.limit_units),
      spent_units: num(d.spent_units),
      period: d.period,
      resets_at: periodEnd(str(d.period_start), str(d.period)),
    };
    return { tenantId, eventId: event.id, event: event.type, data };
  }
  if (event.type === "key.expiring")
    return { tenantId, eventId: event.id, event: "key.expiring", data: { key_id: d.key_id, prefix: d.prefix, expires_at: d.expires_at } };
  return null;
}

/**
 * What the events of one batch of the audit trail mean for account webhooks
 * (docs/decisions/0210), in the consumer's transaction: budget crossings and key
 * expiry notices are queued to the tenants' subscribed webhooks; a ledger movement
 * of a tenant with a balance alert marks its balance for a check (the check reads
 * the balance views, allotments included, after the commit). Tenants without
 * alerts cost one index probe per batch.
 */
export async function noticeAccountEvents({ tx, events }: { tx: SqlExecutor; events: EventEnvelope[] }): Promise<{ queued: number; checks: number }> {
  const notices: AccountNotice[] = [];
  const moved = new Set<string>();
  for (const event of events) {
    if (BALANCE_MOVES.has(event.type)) {
      const tenantId = str((event.data as Data).tenant_id);
      if (tenantId) moved.add(tenantId);
      continue;
    }
    const notice = noticeOf(event);
    if (notice) notices.push(notice);
  }
  const queued = await queueNotices(tx, notices);
  let checks = 0;
  if (moved.size > 0) {
    const rows = await tx.$queryRawUnsafe<{ tenant_id: string }[]>(
      `UPDATE account_alerts SET due_seq = due_seq + 1 WHERE tenant_id = ANY ($1::text[]) AND balance_low_units IS NOT NULL RETURNING tenant_id`,
      [...moved],
    );
    checks = rows.length;
  }
  return { queued, checks };
}
