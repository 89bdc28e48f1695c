import type { SqlExecutor } from "@gateway/events-runtime";

/** What a tenant's account webhooks can subscribe to (CONTRACT.md section 13). */
export const ACCOUNT_EVENTS = ["budget.threshold", "budget.reached", "balance.low", "key.expiring", "ping"] as const;
export type AccountEvent = (typeof ACCOUNT_EVENTS)[number];

/**
 * One event for a tenant's webhooks: every webhook subscribed to it gets a delivery
 * with this `event_id` (the body's and `X-Service-Event-Id`, the same on every retry).
 */
export type AccountNotice = { tenantId: string; eventId: string; event: AccountEvent; data: Record<string, unknown>; webhookId?: string };

/**
 * Queues deliveries of notices, in the caller's transaction: one row per
 * subscribed webhook (or only `webhookId`'s, for a test ping), due now. A notice
 * queued again (a consumer reading an event a second time) is dropped by its
 * (webhook, event id) key. Returns how many deliveries were queued.
 */
export async function queueNotices(tx: SqlExecutor, notices: AccountNotice[]): Promise<number> {
  if (notices.length === 0) return 0;
  const rows = await tx.$queryRawUnsafe<{ seq: bigint }[]>(
    `INSERT INTO account_webhook_deliveries (webhook_id, tenant_id, event_id, event, data, state, next_attempt_at, updated_at)
     SELECT w.id, w.tenant_id, n->>'event_id', n->>'event', n->'data', 'pending', now(), now()
     FROM jsonb_array_elements($1::jsonb) AS n
     JOIN account_webhooks w ON w.tenant_id = n->>'tenant_id'
       AND CASE WHEN n->>'webhook_id' IS NOT NULL THEN w.id = n->>'webhook_id' ELSE (n->>'event') = ANY (w.events) END
     ON CONFLICT (webhook_id, event_id) DO NOTHING
     RETURNING seq`,
    JSON.stringify(
      notices.map((n) => ({ tenant_id: n.tenantId, event_id: n.eventId, event: n.event, data: n.data, ...(n.webhookId ? { webhook_id: n.webhookId } : {}) })),
    ),
  );
  return rows.length;
}
