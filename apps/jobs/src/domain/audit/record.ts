import type { EventEnvelope } from "@gateway/events";
import type { SqlExecutor } from "@gateway/events-runtime";

/**
 * Stores a batch of published events in the audit trail, in the consumer's
 * transaction: one statement, whatever the batch size. An event id already stored
 * (a copy re-published after JetStream's duplicate window) is left alone. Returns
 * the ids it stored.
 */
export async function recordAuditEvents({ tx, events }: { tx: SqlExecutor; events: EventEnvelope[] }): Promise<string[]> {
  const rows = await tx.$queryRawUnsafe<{ event_id: string }[]>(
    `INSERT INTO audit_events (event_id, type, source, request_id, occurred_at, data)
     SELECT e->>'id', e->>'type', e->>'source', e->>'request_id', (e->>'occurred_at')::timestamptz, e->'data'
     FROM jsonb_array_elements($1::jsonb) AS e
     ON CONFLICT (event_id) DO NOTHING
     RETURNING event_id`,
    JSON.stringify(events),
  );
  return rows.map((r) => r.event_id);
}
