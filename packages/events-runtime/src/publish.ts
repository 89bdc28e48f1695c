import { createHash } from "node:crypto";
import { headers as natsHeaders, type PubAck } from "nats";
import { PUBLISHED_IN_BATCHES, typePrefix, type EventEnvelope, type EventType, type Subjects } from "@gateway/events";
import type { JsPublish } from "./js-publisher.js";
import { injectTrace } from "./trace.js";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

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

/** At most this many events, and about this many bytes, in one batch message (NATS takes up to 1 MB a message). */
export const BATCH_MAX_EVENTS = 500;
export const BATCH_MAX_BYTES = 256 * 1024;

/**
 * A batch's message id: its first event's id, its length and a digest of all its event
 * ids. The same batch sent again (a relay's round retried) is dropped by JetStream's dedupe;
 * a batch with any other event in it is a new message, never taken for a copy of another
 * (outbox rounds of two replicas can start at the same event and differ after it:
 * docs/decisions/0331).
 */
export function batchMessageId(ids: readonly string[]): string {
  return `${ids[0]}+${ids.length}.${createHash("sha256").update(ids.join("\n")).digest("base64url").slice(0, 22)}`;
}

/** Publishes a batch: the envelopes (JSON texts, in order) as one JSON array on the prefix's batch subject. */
function publishBatch(js: JsPublish, subjects: Subjects, prefix: string, texts: string[], ids: string[], timeoutMs: number): Promise<PubAck> {
  const h = natsHeaders();
  h.set("Event-Count", String(texts.length));
  injectTrace(h);
  return js.publish(subjects.batch(prefix), encoder.encode(`[${texts.join(",")}]`), { msgID: batchMessageId(ids), headers: h, timeout: timeoutMs });
}

/** A stored event as the relays read it (an outbox row, a row of an event log). */
export type StoredEvent = { id: string; type: EventType; payload: unknown; request_id: string | null; created_at: Date | string };

/**
 * Publishes a relay's batch, concurrently and in the order given (the order the broker
 * receives them). Consecutive events of `PUBLISHED_IN_BATCHES` with one type prefix go
 * as one batch message (up to `BATCH_MAX_EVENTS` events, about `BATCH_MAX_BYTES`); every
 * other event goes alone, under its type's subject.
 */
export function publishStored(js: JsPublish, subjects: Subjects, source: string, rows: readonly StoredEvent[], timeoutMs: number): Promise<PubAck[]> {
  const acks: Promise<PubAck>[] = [];
  let run: { prefix: string; texts: string[]; ids: string[]; bytes: number } | undefined;
  const flush = () => {
    if (run) acks.push(publishBatch(js, subjects, run.prefix, run.texts, run.ids, timeoutMs));
    run = undefined;
  };
  for (const row of rows) {
    const envelope: EventEnvelope = {
      id: row.id,
      type: row.type,
      source,
      occurred_at: new Date(row.created_at).toISOString(),
      request_id: row.request_id,
      data: row.payload as EventEnvelope["data"],
    };
    if (!PUBLISHED_IN_BATCHES.has(row.type)) {
      flush();
      acks.push(publishEnvelope(js, subjects, envelope, timeoutMs));
      continue;
    }
    const text = JSON.stringify(envelope);
    const prefix = typePrefix(row.type);
    if (run && (run.prefix !== prefix || run.texts.length >= BATCH_MAX_EVENTS || run.bytes + text.length > BATCH_MAX_BYTES)) flush();
    run ??= { prefix, texts: [], ids: [], bytes: 2 };
    run.texts.push(text);
    run.ids.push(row.id);
    run.bytes += text.length + 1;
  }
  flush();
  return Promise.all(acks);
}

/**
 * What a stream message carries, not yet checked: one envelope, or a batch's envelopes
 * (a JSON array on a batch subject). Throws when the message is not JSON, or a batch not an array.
 */
export function messageEnvelopes(subjects: Subjects, message: { subject: string; data: Uint8Array }): unknown[] {
  const body: unknown = JSON.parse(decoder.decode(message.data));
  if (!subjects.isBatch(message.subject)) return [body];
  if (!Array.isArray(body)) throw new Error(`batch on ${message.subject} is not an array`);
  return body;
}
