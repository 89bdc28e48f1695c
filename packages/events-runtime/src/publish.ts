import { headers as natsHeaders, type PubAck } from "nats";
import type { EventEnvelope, EventType, Subjects } from "@gateway/events";
import type { JsPublish } from "./js-publisher.js";
import { injectTrace } from "./trace.js";

const encoder = new TextEncoder();

/**
 * Publishes one envelope: message id = event id (JetStream dedupe), request id as a
 * header, and the active trace context (`traceparent`) when tracing is on. `js` is a
 * `JetStreamPublisher` in the services (no Error built per publish), or any `JetStreamClient`.
 */
export function publishEnvelope(js: JsPublish, subjects: Subjects, envelope: EventEnvelope, timeoutMs = 5_000): Promise<PubAck> {
  const h = natsHeaders();
  if (envelope.request_id) h.set("X-Request-ID", envelope.request_id);
  h.set("Event-Type", envelope.type);
  injectTrace(h);
  return js.publish(subjects.subject(envelope.type), encoder.encode(JSON.stringify(envelope)), {
    msgID: envelope.id,
    headers: h,
    timeout: timeoutMs,
  });
}

/** A stored event as the relays read it (an outbox row, a row of an event log). */
export type StoredEvent = { id: string; type: EventType; payload: unknown; request_id: string | null; created_at: Date | string };

/** Publishes a relay's batch, concurrently and in the order given (the order the broker receives them). */
export function publishStored(js: JsPublish, subjects: Subjects, source: string, rows: readonly StoredEvent[], timeoutMs: number): Promise<PubAck[]> {
  return Promise.all(
    rows.map((row) =>
      publishEnvelope(
        js,
        subjects,
        {
          id: row.id,
          type: row.type,
          source,
          occurred_at: new Date(row.created_at).toISOString(),
          request_id: row.request_id,
          data: row.payload as EventEnvelope["data"],
        },
        timeoutMs,
      ),
    ),
  );
}
