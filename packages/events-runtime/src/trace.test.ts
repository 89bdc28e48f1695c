import { randomBytes } from "node:crypto";
import type { JetStreamManager, NatsConnection } from "nats";
import { afterAll, beforeAll, expect, it } from "vitest";
import { newId } from "@gateway/contract/ids";
import { createLogger } from "@gateway/logger";
import { activeContext, inSpan, spanContextOf, SpanKind } from "@gateway/telemetry";
import { recordSpans } from "@gateway/telemetry/testing";
import { subjectsFor } from "@gateway/events";
import { connectNats, ensureStream, outboxTable, publishEnvelope, Relay, startConsumer, type SqlExecutor, type TxRunner } from "./index.js";

const NATS = process.env.NATS_URL ?? "nats://127.0.0.1:4222";
const subjects = subjectsFor(`tr${randomBytes(4).toString("hex")}`);
const logger = createLogger({ service: "events-trace-test", level: "silent" });
let recorder: Awaited<ReturnType<typeof recordSpans>>;
let nc: NatsConnection;
let jsm: JetStreamManager;

beforeAll(async () => {
  recorder = await recordSpans("events");
  nc = await connectNats(NATS, "events-trace-test");
  jsm = await nc.jetstreamManager();
  await ensureStream(jsm, subjects);
});

afterAll(async () => {
  await jsm?.streams.delete(subjects.stream).catch(() => undefined);
  await nc?.drain();
  await recorder.stop();
});

/** processed_events as the marking consumer uses it: every id is fresh. */
const runTx: TxRunner<SqlExecutor> = (fn) =>
  fn({
    $queryRawUnsafe: (async (_sql: string, _consumer: string, ids: string[]) => ids.map((event_id) => ({ event_id }))) as SqlExecutor["$queryRawUnsafe"],
    $executeRawUnsafe: (async () => 0) as SqlExecutor["$executeRawUnsafe"],
  } as SqlExecutor);

it("an event published inside a span carries its traceparent; the consumer's batch span continues that trace", async () => {
  const seen: (string | undefined)[] = [];
  const consumer = await startConsumer({
    js: nc.jetstream(),
    jsm,
    subjects,
    durable: "trace-test",
    types: ["ledger.credited"],
    runTx,
    logger,
    handler: async () => {
      seen.push(spanContextOf(activeContext())?.spanId);
    },
  });
  try {
    let caller!: { traceId: string; spanId: string };
    await inSpan("request", {}, async (span) => {
      caller = span.spanContext();
      await publishEnvelope(nc.jetstream(), subjects, {
        id: newId("evt"),
        type: "ledger.credited",
        source: "test",
        occurred_at: new Date().toISOString(),
        request_id: null,
        data: { tenant_id: "ten_1", entry_id: "ent_1", operation_id: "op_1", units: "1", available_units: "1", reason: "r" },
      });
    });
    await expect.poll(() => recorder.spans().some((s) => s.name === "process trace-test"), { timeout: 5_000 }).toBe(true);
    const span = recorder.spans().find((s) => s.name === "process trace-test")!;
    expect(span.kind).toBe(SpanKind.CONSUMER);
    expect(span.spanContext().traceId).toBe(caller.traceId);
    expect(span.parentSpanContext?.spanId).toBe(caller.spanId);
    expect(span.attributes["messaging.batch.message_count"]).toBe(1);
    // The handler ran inside the batch span.
    expect(seen).toEqual([span.spanContext().spanId]);
  } finally {
    await consumer.stop();
  }
});

it("a relay round that published is a root producer span; the consumer's batch continues the relay's trace", async () => {
  recorder.reset();
  // An outbox holding one row, then none.
  let rows = [
    {
      seq: 1n,
      id: "evt_relayed_1",
      type: "ledger.credited",
      payload: { tenant_id: "ten_1", entry_id: "ent_2", operation_id: "op_2", units: "2", available_units: "2", reason: "r" },
      request_id: "req_relayed1",
      created_at: new Date(),
    },
  ];
  const outbox: TxRunner<SqlExecutor> = (fn) =>
    fn({
      $queryRawUnsafe: (async () => {
        const out = rows;
        rows = [];
        return out;
      }) as SqlExecutor["$queryRawUnsafe"],
      $executeRawUnsafe: (async () => 0) as SqlExecutor["$executeRawUnsafe"],
    } as SqlExecutor);
  const relay = new Relay({ from: outboxTable({ runTx: outbox }), js: nc.jetstream(), subjects, source: "test", logger, pollMs: 60_000 });
  const consumer = await startConsumer({
    js: nc.jetstream(),
    jsm,
    subjects,
    durable: "relay-trace-test",
    types: ["ledger.credited"],
    runTx,
    logger,
    handler: async () => undefined,
  });
  try {
    // Flushed from inside another span: the round must not become its child.
    await inSpan("unrelated request", {}, () => relay.flush());
    const round = () => recorder.spans().find((s) => s.name === `publish ${subjects.stream}`);
    // The consumer may also see the first test's event (its own batch); the relayed one continues the round's trace.
    const continued = () =>
      recorder
        .spans()
        .some(
          (s) =>
            s.name === "process relay-trace-test" &&
            s.parentSpanContext?.spanId === round()?.spanContext().spanId &&
            s.spanContext().traceId === round()?.spanContext().traceId,
        );
    await expect.poll(continued, { timeout: 5_000 }).toBe(true);
    expect(round()!.kind).toBe(SpanKind.PRODUCER);
    expect(round()!.parentSpanContext).toBeUndefined();
    expect(round()!.attributes["messaging.batch.message_count"]).toBe(1);
  } finally {
    await consumer.stop();
  }
});
