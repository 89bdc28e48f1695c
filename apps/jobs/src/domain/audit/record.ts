import type { EventEnvelope, SqlExecutor } from "@gateway/events";

/**
 * Stores a batch of published events in the audit trail, in the consumer's
 * transaction: one statement, whatever the batch size.
 */
export async function recordAuditEvents({ tx, events }: { tx: SqlExecutor; events: EventEnvelope[] }): Promise<void> {
  await tx.$executeRawUnsafe(
    `INSERT INTO audit_events (event_id, type, source, request_id, occurred_at, data)
     SELECT e->>'id', e->>'type', e->>'source', e->>'request_id', (e->>'occurred_at')::timestamptz, e->'data'
     FROM jsonb_array_elements($1::jsonb) AS e
     ON CONFLICT (event_id) DO NOTHING`,
    JSON.stringify(events),
  );
}
