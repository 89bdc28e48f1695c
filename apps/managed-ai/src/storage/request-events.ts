import type { Statements } from "@gateway/events-runtime";
import type { RequestEventRow } from "../domain/ports.js";

/**
 * The events of one request that managed-ai keeps with its usage record
 * (docs/decisions/0330), as they were published: same id, type, payload and time.
 *  - `managed_ai.request_reserved`: from view usage_record_events, the one place that
 *    derives it from the record (the relay publishes what the view says);
 *  - `managed_ai.request_settled`: from the record's settled_* columns, the record's own note
 *    of its first settlement, written by the same statement as the log row the relay tails
 *    (usage_record_settlements, pruned once published): the view's expression over those
 *    columns (request-events.test.ts checks the two agree);
 *  - a refused request's reservation, whose record is gone: from usage_record_refusals.
 * Only the tenant's; none for an unknown request. Three probes by key.
 */
export const REQUEST_EVENTS = `
  SELECT l.id, l.type, l.payload::text AS data_json, l.created_at FROM usage_record_events l
  WHERE l.request_id = $1 AND l.type = 'managed_ai.request_reserved' AND l.payload->>'tenant_id' = $2
  UNION ALL
  SELECT 'evt_' || upper(substr(md5(r.id || ':settled'), 1, 26)), 'managed_ai.request_settled',
    jsonb_build_object('request_id', r.id, 'tenant_id', r.tenant_id, 'key_id', r.api_key_id,
      'status', r.settled_status, 'reserved_units', r.reserved_units::TEXT,
      'final_units', r.settled_final_units::TEXT, 'error_code', r.settled_error_code)::text,
    r.settled_event_at
  FROM usage_records r WHERE r.id = $1 AND r.tenant_id = $2 AND r.settled_txid IS NOT NULL
  UNION ALL
  SELECT f.event_id, 'managed_ai.request_reserved', f.payload::text, f.created_at FROM usage_record_refusals f
  WHERE f.request_id = $1 AND f.tenant_id = $2`;

export async function requestEvents(sql: Pick<Statements, "query">, requestId: string, tenantId: string): Promise<RequestEventRow[]> {
  const rows = await sql.query<{ id: string; type: string; data_json: string; created_at: Date }>(
    REQUEST_EVENTS,
    [requestId, tenantId],
    "usage_request_events",
  );
  return rows.map((r) => ({ id: r.id, type: r.type, dataJson: r.data_json, createdAt: r.created_at }));
}
