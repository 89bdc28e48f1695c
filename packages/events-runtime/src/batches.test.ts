import { randomBytes } from "node:crypto";
import type pg from "pg";
import { headers as natsHeaders, type JetStreamManager, type NatsConnection } from "nats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "@gateway/logger";
import { subjectsFor, type EventEnvelope } from "@gateway/events";
import {
  BATCH_MAX_EVENTS,
  connectNats,
  ensureStream,
  JetStreamPublisher,
  outboxTable,
  pgTransactions,
  publishStored,
  readEnvelopes,
  Relay,
  startCheckpointConsumer,
  startConsumer,
  startWorkQueue,
  type RunningConsumer,
  type SqlExecutor,
  type StoredEvent,
  type TxRunner,
} from "./index.js";
import { scratchDatabase, TEST_NATS, waitFor } from "./test-support.js";

// The request path's events travel in batches (docs/decisions/0331): what the relay sends,
// what JetStream keeps, and what each kind of consumer makes of it.

const run = randomBytes(4).toString("hex");
const logger = createLogger({ service: "batches-test", level: process.env.BATCHES_TEST_LOG ?? "silent" });

let db: Awaited<ReturnType<typeof scratchDatabase>>;
let pool: pg.Pool;
let nc: NatsConnection;
let jsm: JetStreamManager;
let n = 0;
const runTx: TxRunner<SqlExecutor> = (fn) => pgTransactions(pool)(fn);

async function newStream(): Promise<ReturnType<typeof subjectsFor>> {
  const subjects = subjectsFor(`tb${run}${++n}`);
  await ensureStream(jsm, subjects);
  return subjects;
}

const posted = (i: number): StoredEvent => ({
  id: `evt_post_${run}_${i}`,
  type: "ledger.posted",
  payload: { tenant_id: "ten_1", hold_id: "hold_1", entry_id: `ent_${i}`, operation_id: `op_${i}`, units: "1", available_units: "0", reserved_units: "0" },
  request_id: `req_${i}`,
  created_at: new Date(),
});
const credited = (i: number): StoredEvent => ({
  id: `evt_credit_${run}_${i}`,
  type: "ledger.credited",
  payload: { tenant_id: "ten_1", entry_id: `ent_${i}`, operation_id: `op_${i}`, units: "1", available_units: "1", reason: "test" },
  request_id: null,
  created_at: new Date(),
});

/** Events in the order a relay reads them: runs of posts with a credit every `every`. */
const mixed = (count: number, every = 7): StoredEvent[] => Array.from({ length: count }, (_, i) => (i % every === every - 1 ? credited(i) : posted(i)));

async function bySubject(subjects: ReturnType<typeof subjectsFor>): Promise<Record<string, number>> {
  return (await jsm.streams.info(subjects.stream, { subjects_filter: subjects.all })).state.subjects ?? {};
}

beforeAll(async () => {
  db = await scratchDatabase(
    "gw_test_batches",
    `
    CREATE TABLE outbox_events (seq BIGSERIAL PRIMARY KEY, id TEXT NOT NULL UNIQUE, type TEXT NOT NULL, payload JSONB NOT NULL,
      request_id TEXT, created_at TIMESTAMPTZ(3) NOT NULL DEFAULT now());
    CREATE TABLE processed_events (consumer TEXT NOT NULL, event_id TEXT NOT NULL, processed_at TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
      PRIMARY KEY (consumer, event_id));
    CREATE TABLE consumer_checkpoints (consumer TEXT PRIMARY KEY, stream_seq BIGINT NOT NULL, updated_at TIMESTAMPTZ(3) NOT NULL DEFAULT now());
    CREATE TABLE applied (consumer TEXT NOT NULL, event_id TEXT NOT NULL, at BIGSERIAL, UNIQUE (consumer, event_id));
  `,
  );
  pool = db.pool;
  nc = await connectNats(TEST_NATS, "batches-test");
  jsm = await nc.jetstreamManager();
});

afterAll(async () => {
  const streams = await jsm?.streams.names().next();
  for (const s of streams ?? []) if (s.startsWith(`tb${run}`)) await jsm.streams.delete(s).catch(() => undefined);
  await nc?.drain();
  await db?.drop();
});

describe("publishing in batches", () => {
  it("sends each run of the request path's events as one message and every other event alone, in order", async () => {
    const subjects = await newStream();
    const events = [...mixed(30), ...Array.from({ length: BATCH_MAX_EVENTS + 3 }, (_, i) => posted(100 + i))];
    await publishStored(new JetStreamPublisher(nc), subjects, "batches-test", events, 5_000);

    const counts = await bySubject(subjects);
    // 30 mixed events: 4 credits alone and 5 runs of posts (the last run joins the long one, split at the cap).
    expect(counts[subjects.subject("ledger.credited")]).toBe(4);
    expect(counts[subjects.batch("ledger")]).toBe(5 + 1);
    expect(counts[subjects.subject("ledger.posted")]).toBeUndefined();
    const read = await readEnvelopes(nc.jetstream(), subjects);
    expect(read.map((e) => e.id)).toEqual(events.map((e) => e.id));
    expect(read[0]).toEqual({
      id: events[0]!.id,
      type: "ledger.posted",
      source: "batches-test",
      occurred_at: new Date(events[0]!.created_at).toISOString(),
      request_id: "req_0",
      data: events[0]!.payload,
    });
  });

  it("a batch sent again as it was is dropped by JetStream's duplicate window; one with any other event is a new message", async () => {
    const subjects = await newStream();
    const js = new JetStreamPublisher(nc);
    const events = Array.from({ length: 5 }, (_, i) => posted(200 + i));
    await publishStored(js, subjects, "batches-test", events, 5_000);
    const again = await publishStored(js, subjects, "batches-test", events, 5_000);
    expect(again.map((a) => a.duplicate)).toEqual([true]);
    expect((await jsm.streams.info(subjects.stream)).state.messages).toBe(1);
    // A retried round with more events repeats the first ones (at least once).
    await publishStored(js, subjects, "batches-test", [...events, posted(205)], 5_000);
    // Two replicas' outbox rounds can start at the same event and differ after it: same
    // first id, same length, other events. Taking it for a copy would lose posted(299).
    const other = [...events.slice(0, 4), posted(299)];
    expect((await publishStored(js, subjects, "batches-test", other, 5_000)).map((a) => a.duplicate)).toEqual([false]);
    expect((await readEnvelopes(nc.jetstream(), subjects)).map((e) => e.id)).toEqual([...events, ...events, posted(205), ...other].map((e) => e.id));
  });
});

describe("consuming batches", () => {
  async function applied(consumer: string): Promise<string[]> {
    return (await pool.query<{ event_id: string }>("SELECT event_id FROM applied WHERE consumer = $1 ORDER BY at", [consumer])).rows.map((r) => r.event_id);
  }
  const record =
    (consumer: string, fail?: { id: string; times: number }) =>
    async (events: EventEnvelope[], tx: SqlExecutor): Promise<void> => {
      if (fail && fail.times > 0 && events.some((e) => e.id === fail.id)) {
        fail.times--;
        throw new Error("handler failed on purpose");
      }
      for (const e of events) await tx.$executeRawUnsafe("INSERT INTO applied (consumer, event_id) VALUES ($1, $2)", consumer, e.id);
    };

  it("the relay's batches reach a checkpointing consumer of every event and a durable consumer of one type, each event once", async () => {
    const subjects = await newStream();
    const events = mixed(120, 10);
    for (const e of events)
      await pool.query("INSERT INTO outbox_events (id, type, payload, request_id, created_at) VALUES ($1, $2, $3, $4, $5)", [
        e.id,
        e.type,
        JSON.stringify(e.payload),
        e.request_id,
        e.created_at,
      ]);
    const relay = new Relay({ from: outboxTable({ runTx }), js: new JetStreamPublisher(nc), subjects, source: "batches-test", logger, pollMs: 50 });
    // One post fails in its batch's transaction and again alone: its batch message goes back
    // (nak'ed after the message's last event), and the other events in it are not applied twice.
    const failing = { id: events[3]!.id, times: 2 };
    const consumers: RunningConsumer[] = [
      await startCheckpointConsumer({ js: nc.jetstream(), jsm, subjects, name: `all_${n}`, types: [], runTx, logger, handler: record(`all_${n}`) }),
      await startConsumer({
        js: nc.jetstream(),
        jsm,
        subjects,
        durable: `posts_${n}`,
        types: ["ledger.posted"],
        runTx,
        logger,
        handler: record(`posts_${n}`, failing),
      }),
    ];
    relay.start();
    try {
      const posts = events.filter((e) => e.type === "ledger.posted").map((e) => e.id);
      await waitFor(async () => (await applied(`all_${n}`)).length >= events.length && (await applied(`posts_${n}`)).length >= posts.length);
      expect(await applied(`all_${n}`)).toEqual(events.map((e) => e.id));
      expect(new Set(await applied(`posts_${n}`))).toEqual(new Set(posts));
      expect(await applied(`posts_${n}`)).toHaveLength(posts.length);
      expect(failing.times).toBe(0);
      expect((await bySubject(subjects))[subjects.batch("ledger")]).toBeLessThan(posts.length);
    } finally {
      await relay.stop();
      for (const c of consumers) await c.stop();
    }
  });

  it("passes over a malformed envelope in a batch and applies the rest", async () => {
    const subjects = await newStream();
    const good = [posted(300), posted(301)];
    const envelope = (e: StoredEvent) => ({ id: e.id, type: e.type, source: "x", occurred_at: new Date().toISOString(), request_id: null, data: e.payload });
    const body = JSON.stringify([envelope(good[0]!), { id: "evt_bad", type: "ledger.posted" }, envelope(good[1]!)]);
    await nc.jetstream().publish(subjects.batch("ledger"), new TextEncoder().encode(body), { msgID: "hand-made", headers: natsHeaders() });
    await nc.jetstream().publish(subjects.batch("ledger"), new TextEncoder().encode('{"not":"an array"}'), { msgID: "not-a-batch" });
    const name = `malformed_${n}`;
    const consumer = await startCheckpointConsumer({ js: nc.jetstream(), jsm, subjects, name, types: [], runTx, logger, handler: record(name) });
    try {
      await waitFor(async () => (await applied(name)).length >= 2);
      expect(await applied(name)).toEqual(good.map((e) => e.id));
      await waitFor(async () => {
        const [row] = (await pool.query<{ s: string }>("SELECT stream_seq::text AS s FROM consumer_checkpoints WHERE consumer = $1", [name])).rows;
        return row?.s === "2";
      });
    } finally {
      await consumer.stop();
    }
  });

  it("refuses a work queue of an event type that travels in batches", async () => {
    const subjects = await newStream();
    await expect(
      startWorkQueue({
        js: nc.jetstream(),
        jsm,
        subjects,
        durable: "posts",
        type: "ledger.posted",
        concurrency: 1,
        logger,
        work: async () => ({ kind: "done" }),
      }),
    ).rejects.toThrow(/published in batches/);
  });
});
