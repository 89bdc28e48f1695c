import { KEPT_AT_SOURCE, type EventEnvelope } from "@gateway/events";
import type { SqlExecutor } from "@gateway/events-runtime";

/**
 * Stores a batch of published events in the audit trail, in the consumer's
 * transaction: one statement, whatever the batch size. An event id already stored
 * (a copy re-published after JetStream's duplicate window) is left alone.
 *
 * Events their producer keeps (`KEPT_AT_SOURCE`: a usage record's reservation and
 * settlement, the ledger's hold movements) are not copied: the request view reads them
 * from their source (docs/decisions/0330). A batch of nothing else writes nothing.
 * Returns the ids it handled: those it stored and those kept at their source (an id
 * left out was a duplicate).
 */
export async function recordAuditEvents({ tx, events }: { tx: SqlExecutor; events: EventEnvelope[] }): Promise<string[]> {
  const kept: string[] = [];
  const stored: EventEnvelope[] = [];
  for (const e of events) {
    if (KEPT_AT_SOURCE.has(e.type)) kept.push(e.id);
    else stored.push(e);
  }
  if (stored.length === 0) return kept;
  const rows = await tx.$queryRawUnsafe<{ event_id: string }[]>(
    `INSERT INTO audit_events (event_id, type, source, request_id, occurred_at, data)
     SELECT e->>'id', e->>'type', e->>'source', e->>'request_id', (e->>'occurred_at')::timestamptz, e->'data'
     FROM jsonb_array_elements($1::jsonb) AS e
     ON CONFLICT (event_id) DO NOTHING
     RETURNING event_id`,
    JSON.stringify(stored),
  );
  return [...rows.map((r) => r.event_id), ...kept];
}
