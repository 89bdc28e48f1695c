import type { JsMsg, MsgHdrs } from "nats";
import {
  extractContext,
  failSpan,
  injectContext,
  inSpan,
  NOOP_SPAN,
  spanContextOf,
  SpanKind,
  startSpan,
  tracingEnabled,
  withSpan,
  type Context,
  type Link,
  type Span,
  type TextMapGetter,
  type TextMapSetter,
} from "@gateway/telemetry";

/** W3C trace context in NATS message headers. */
const setter: TextMapSetter<MsgHdrs> = { set: (h, key, value) => h.set(key, value) };
const getter: TextMapGetter<MsgHdrs> = { keys: (h) => h.keys(), get: (h, key) => h.get(key) || undefined };

/** Writes the active trace context into a message's headers (nothing while tracing is off). */
export function injectTrace(headers: MsgHdrs): void {
  injectContext(headers, setter);
}

/**
 * A relay round that published: a root span (relay rounds run on their own
 * schedule, for many requests at once) from the round's start, active while
 * its events are published, so their headers carry it to the consumers.
 */
export async function inRelaySpan<T>(
  name: string,
  startedAt: number,
  events: number,
  stream: string,
  publish: () => Promise<T>,
): Promise<{ span: Span; result: T }> {
  const span = startSpan(name, {
    kind: SpanKind.PRODUCER,
    root: true,
    startTime: startedAt,
    attributes: {
      "messaging.system": "nats",
      "messaging.operation.type": "send",
      "messaging.destination.name": stream,
      "messaging.batch.message_count": events,
    },
  });
  try {
    return { span, result: await withSpan(span, publish) };
  } catch (err) {
    endRelaySpan(span, err);
    throw err;
  }
}

export function endRelaySpan(span: Span, err?: unknown): void {
  if (span === NOOP_SPAN) return;
  if (err !== undefined) failSpan(span, err);
  span.end();
}

/**
 * A consumer's batch in a span: a child of the first message's trace context
 * (when its headers carry one) that links the other messages' contexts.
 */
export function inConsumerSpan<T>(consumer: string, messages: JsMsg[], fn: () => Promise<T>): Promise<T> {
  if (!tracingEnabled()) return fn();
  const contexts: Context[] = messages.map((m) => (m.headers ? extractContext(m.headers, getter) : undefined)).filter((c): c is Context => c !== undefined);
  const links: Link[] = [];
  for (const ctx of contexts.slice(1)) {
    const context = spanContextOf(ctx);
    if (context) links.push({ context });
  }
  const attributes = {
    "messaging.system": "nats",
    "messaging.operation.type": "process",
    "messaging.consumer.group.name": consumer,
    "messaging.batch.message_count": messages.length,
  };
  return inSpan(`process ${consumer}`, { kind: SpanKind.CONSUMER, root: contexts.length === 0, links, attributes }, fn, contexts[0]);
}
