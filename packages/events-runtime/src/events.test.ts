import { randomBytes } from "node:crypto";
import { Writable } from "node:stream";
import pg from "pg";
import { headers as natsHeaders, type JetStreamManager, type NatsConnection } from "nats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectionConfig, databaseUrl, dropDatabase, ensureDatabase } from "@gateway/db-kit";
import { createLogger, runWithContext } from "@gateway/logger";
import { Registry } from "@gateway/metrics";
import { InvalidEventError, subjectsFor, type EventEnvelope } from "@gateway/events";
import {
  connectNats,
  createTransact,
  enqueueEvent,
  ensureStream,
  outboxTable,
  Relay,
  pgTransactions,
  startConsumer,
  type RunningConsumer,
  type SqlExecutor,
  type TxRunner,
} from "./index.js";

const SERVER = process.env.DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
const NATS = process.env.NATS_URL ?? "nats://127.0.0.1:4222";
const run = randomBytes(4).toString("hex");
const dbName = `gw_test_events_${run}`;
const subjects = subjectsFor(`t${run}`);
const logLines: Record<string, unknown>[] = [];
const logger = createLogger({
  service: "events-test",
  level: "debug",
  destination: new Writable({
    write(c, _e, cb) {
      for (const l of String(c).split("\n")) if (l) logLines.push(JSON.parse(l));
      cb();
    },
  }),
});

let pool: pg.Pool;
let nc: NatsConnection;
let jsm: JetStreamManager;

const runTx: TxRunner<SqlExecutor> = (fn) => pgTransactions(pool)(fn);

async function waitFor(check: () => boolean | Promise<boolean>, ms = 5_000): Promise<void> {
  const until = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > until) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 20));
  }
}

const handled: EventEnvelope[] = [];
let failNext = 0;
async function consumer(durable = "audit-test"): Promise<RunningConsumer> {
  return startConsumer({
    js: nc.jetstream(),
    jsm,
    subjects,
    durable,
    types: ["ledger.credited"],
    runTx,
    logger,
    handler: async (events, tx) => {
      if (failNext > 0) {
        failNext--;
        throw new Error("handler failed on purpose");
      }
      for (const event of events) {
        await tx.$executeRawUnsafe("INSERT INTO side_effects (event_id) VALUES ($1)", event.id);
        handled.push(event);
      }
    },
  });
}

const credit = (n: number) => ({
  tenant_id: "ten_1",
  entry_id: `ent_${n}`,
  operation_id: `op_${n}`,
  units: String(n),
  available_units: String(n),
  reason: "test",
});

async function sideEffects(): Promise<string[]> {
  return (await pool.query<{ event_id: string }>("SELECT event_id FROM side_effects ORDER BY event_id")).rows.map((r) => r.event_id);
}

let relay: Relay;

beforeAll(async () => {
  await ensureDatabase(SERVER, dbName);
  pool = new pg.Pool(connectionConfig(databaseUrl(SERVER, dbName)));
  await pool.query(`
    CREATE TABLE outbox_events (seq BIGSERIAL PRIMARY KEY, id TEXT NOT NULL UNIQUE, type TEXT NOT NULL, payload JSONB NOT NULL,
      request_id TEXT, created_at TIMESTAMPTZ(3) NOT NULL DEFAULT now());
    CREATE TABLE processed_events (consumer TEXT NOT NULL, event_id TEXT NOT NULL, processed_at TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
      PRIMARY KEY (consumer, event_id));
    CREATE TABLE side_effects (event_id TEXT PRIMARY KEY);
  `);
  nc = await connectNats(NATS, "events-test");
  jsm = await nc.jetstreamManager();
  await ensureStream(jsm, subjects);
  await ensureStream(jsm, subjects); // idempotent
  relay = new Relay({ from: outboxTable({ runTx }), js: nc.jetstream(), subjects, source: "events-test", logger, pollMs: 50 });
  relay.start();
});

afterAll(async () => {
  await relay?.stop();
  await jsm?.streams.delete(subjects.stream).catch(() => undefined);
  await nc?.drain();
  await pool?.end();
  await dropDatabase(SERVER, dbName);
});

describe("pgTransactions", () => {
  /** A pool whose one connection records each message it sends (pg sends one per query call). */
  function recordingPool(sent: string[]) {
    return {
      async connect() {
        const client = await pool.connect();
        return {
          query: (text: string, values?: unknown[]) => {
            sent.push(text);
            return client.query(text, values);
          },
          release: (err?: Error | boolean) => client.release(err),
        };
      },
    };
  }

  it("sends BEGIN with the first statement when it has no parameters, and nothing for a transaction that ran none", async () => {
    const sent: string[] = [];
    const tx = pgTransactions(recordingPool(sent), { synchronousCommit: false });
    const n = await tx(async (t) => (await t.$queryRawUnsafe<{ n: number }[]>("SELECT 41 + 1 AS n"))[0]!.n);
    expect(n).toBe(42);
    expect(sent).toEqual(["BEGIN; SET LOCAL synchronous_commit = off; SELECT 41 + 1 AS n", "COMMIT"]);
    sent.length = 0;
    await tx(async (t) => t.$queryRawUnsafe("SELECT $1::int AS n", 7));
    expect(sent).toEqual(["BEGIN; SET LOCAL synchronous_commit = off", "SELECT $1::int AS n", "COMMIT"]);
    sent.length = 0;
    expect(await tx(async () => "nothing")).toBe("nothing");
    expect(sent).toEqual([]);
  });

  it("rolls back a transaction whose statements rode with BEGIN", async () => {
    const sent: string[] = [];
    await pool.query("CREATE TABLE IF NOT EXISTS tx_probe (v int)");
    await expect(
      pgTransactions(recordingPool(sent))(async (t) => {
        await t.$executeRawUnsafe("INSERT INTO tx_probe VALUES (1)");
        throw new Error("after the insert");
      }),
    ).rejects.toThrow("after the insert");
    expect(sent).toEqual(["BEGIN; INSERT INTO tx_probe VALUES (1)", "ROLLBACK"]);
    expect((await pool.query("SELECT count(*)::int AS n FROM tx_probe")).rows[0].n).toBe(0);
  });
});

describe("outbox and consumer", () => {
  it("publishes an event if and only if its transaction commits, with the request id", async () => {
    const transact = createTransact(runTx, relay);
    const c = await consumer();
    try {
      await runWithContext({ requestId: "req_commit1" }, () =>
        transact(async (_tx, emit) => {
          await emit("ledger.credited", credit(1), { id: "evt_commit_1" });
        }),
      );
      await expect(
        transact(async (_tx, emit) => {
          await emit("ledger.credited", credit(2), { id: "evt_rollback_2" });
          throw new Error("business rule failed after emit");
        }),
      ).rejects.toThrow("business rule failed");
      await waitFor(() => handled.length >= 1);
      await new Promise((r) => setTimeout(r, 300));
      expect(handled.map((e) => e.id)).toEqual(["evt_commit_1"]);
      expect(handled[0]).toMatchObject({ type: "ledger.credited", source: "events-test", request_id: "req_commit1", data: credit(1) });
      expect((await pool.query("SELECT count(*)::int AS n FROM outbox_events")).rows[0].n).toBe(0);
    } finally {
      await c.stop();
    }
  });

  it("runs the handler once for an event delivered twice (re-publish after a relay crash)", async () => {
    const c = await consumer();
    try {
      await runTx((tx) => enqueueEvent(tx, "ledger.credited", credit(3), { id: "evt_dup_3" }));
      relay.kick();
      await waitFor(async () => (await sideEffects()).includes("evt_dup_3"));
      // The relay crashed after JetStream's ack but before deleting the row; past the
      // duplicate window it publishes again under a new message id.
      const envelope = { id: "evt_dup_3", type: "ledger.credited", source: "x", occurred_at: new Date().toISOString(), request_id: null, data: credit(3) };
      await nc.jetstream().publish(subjects.subject("ledger.credited"), new TextEncoder().encode(JSON.stringify(envelope)), { msgID: "other-msg-id" });
      await waitFor(() => logLines.some((l) => l.event_id === "evt_dup_3" && l.outcome === "duplicate"));
      expect((await sideEffects()).filter((id) => id === "evt_dup_3")).toHaveLength(1);
      expect(handled.filter((e) => e.id === "evt_dup_3")).toHaveLength(1);
    } finally {
      await c.stop();
    }
  });

  it("keeps its place across a restart: nothing lost, nothing repeated", async () => {
    for (let i = 10; i < 15; i++) await runTx((tx) => enqueueEvent(tx, "ledger.credited", credit(i), { id: `evt_restart_${i}` }));
    relay.kick();
    await waitFor(async () => (await pool.query("SELECT count(*)::int AS n FROM outbox_events")).rows[0].n === 0);
    // The consumer is down while these are published; it picks them up when it returns.
    const c = await consumer();
    await waitFor(async () => (await sideEffects()).filter((id) => id.startsWith("evt_restart_")).length === 5);
    await c.stop();
    for (let i = 15; i < 20; i++) await runTx((tx) => enqueueEvent(tx, "ledger.credited", credit(i), { id: `evt_restart_${i}` }));
    relay.kick();
    const again = await consumer();
    try {
      await waitFor(async () => (await sideEffects()).filter((id) => id.startsWith("evt_restart_")).length === 10);
      await new Promise((r) => setTimeout(r, 200));
      const ids = (await sideEffects()).filter((id) => id.startsWith("evt_restart_"));
      expect(ids).toHaveLength(10);
      expect(new Set(handled.map((e) => e.id)).size).toBe(handled.length);
    } finally {
      await again.stop();
    }
  });

  it("redelivers after a handler failure and rolls back the failed attempt", async () => {
    failNext = 1;
    const c = await consumer();
    try {
      await runTx((tx) => enqueueEvent(tx, "ledger.credited", credit(30), { id: "evt_retry_30" }));
      relay.kick();
      await waitFor(async () => (await sideEffects()).includes("evt_retry_30"), 8_000);
      expect(logLines.some((l) => l.event_id === "evt_retry_30" && l.msg === "event handler failed; will be redelivered")).toBe(true);
      const processed = await pool.query("SELECT count(*)::int AS n FROM processed_events WHERE event_id = 'evt_retry_30'");
      expect(processed.rows[0].n).toBe(1);
    } finally {
      await c.stop();
    }
  });

  it("handles what arrives together in one transaction, and a duplicate within a batch once", async () => {
    const before = handled.length;
    for (let i = 50; i < 80; i++) await runTx((tx) => enqueueEvent(tx, "ledger.credited", credit(i), { id: `evt_batch_${i}` }));
    await relay.flush();
    const envelope = { id: "evt_batch_50", type: "ledger.credited", source: "x", occurred_at: new Date().toISOString(), request_id: null, data: credit(50) };
    await nc.jetstream().publish(subjects.subject("ledger.credited"), new TextEncoder().encode(JSON.stringify(envelope)), { msgID: "batch-dup" });
    const c = await consumer();
    try {
      await waitFor(async () => (await sideEffects()).filter((id) => id.startsWith("evt_batch_")).length === 30);
      await new Promise((r) => setTimeout(r, 200));
      expect(handled.length - before).toBe(30);
      const batchLines = logLines.filter((l) => typeof l.event_id === "string" && (l.event_id as string).startsWith("evt_batch_"));
      expect(batchLines.filter((l) => l.outcome === "duplicate")).toHaveLength(1);
    } finally {
      await c.stop();
    }
  });

  it("with a linger, commits the events of several moments in one transaction", async () => {
    // Its own durable, which also receives the stream's history: only the batches of this test's events count.
    const batches: string[][] = [];
    const c = await startConsumer({
      js: nc.jetstream(),
      jsm,
      subjects,
      durable: "audit-linger",
      types: ["ledger.credited"],
      runTx,
      logger,
      lingerMs: 400,
      handler: async (events) => {
        const mine = events.map((e) => e.id).filter((id) => id.startsWith("evt_linger_"));
        if (mine.length > 0) batches.push(mine);
      },
    });
    try {
      for (let i = 90; i < 95; i++) {
        await runTx((tx) => enqueueEvent(tx, "ledger.credited", credit(i), { id: `evt_linger_${i}` }));
        relay.kick();
        await new Promise((r) => setTimeout(r, 30));
      }
      await waitFor(() => batches.flat().length === 5, 3_000);
      expect(batches).toEqual([["evt_linger_90", "evt_linger_91", "evt_linger_92", "evt_linger_93", "evt_linger_94"]]);
    } finally {
      await c.stop();
    }
  });

  it("a relay with a linger publishes the commits kicked within it as one batch, without waiting for its poll", async () => {
    const registry = new Registry();
    const lingering = new Relay({
      from: outboxTable({ runTx }),
      js: nc.jetstream(),
      subjects,
      source: "events-test",
      logger,
      registry,
      pollMs: 60_000,
      lingerMs: 300,
    });
    await relay.stop(); // the polling relay of the other tests would take the rows first
    lingering.start();
    const c = await consumer();
    try {
      await new Promise((r) => setTimeout(r, 100)); // the start-up poll is over
      const metric = async (name: string) => (await registry.getSingleMetric(name)!.get()).values[0]?.value ?? 0;
      const batchesBefore = await metric("outbox_batches_total");
      const started = Date.now();
      for (let i = 100; i < 103; i++) {
        await runTx((tx) => enqueueEvent(tx, "ledger.credited", credit(i), { id: `evt_lrelay_${i}` }));
        lingering.kick();
      }
      await waitFor(async () => (await sideEffects()).filter((id) => id.startsWith("evt_lrelay_")).length === 3, 5_000);
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(await metric("outbox_batches_total")).toBe(batchesBefore + 1);
      expect(await metric("outbox_published_total")).toBe(3);
    } finally {
      await c.stop();
      await lingering.stop();
      relay = new Relay({ from: outboxTable({ runTx }), js: nc.jetstream(), subjects, source: "events-test", logger, pollMs: 50 });
      relay.start();
    }
  });

  it("publishes a batch in seq order as numbers (99 before 100), not as the text pg returns", async () => {
    await relay.stop();
    const order: string[] = [];
    const recording = new Relay({
      from: outboxTable({ runTx: pgTransactions(pool, { synchronousCommit: false }) }),
      js: { publish: async (_subject: string, _data: Uint8Array, opts: { msgID: string }) => void order.push(opts.msgID) } as never,
      subjects,
      source: "events-test",
      logger,
      pollMs: 60_000,
    });
    try {
      await pool.query("SELECT setval(pg_get_serial_sequence('outbox_events', 'seq'), 98)");
      await runTx(async (tx) => {
        for (const i of [99, 100, 101]) await enqueueEvent(tx, "ledger.credited", credit(i), { id: `evt_order_${i}` });
      });
      expect(await recording.flush()).toBe(3);
      expect(order).toEqual(["evt_order_99", "evt_order_100", "evt_order_101"]);
    } finally {
      relay = new Relay({ from: outboxTable({ runTx }), js: nc.jetstream(), subjects, source: "events-test", logger, pollMs: 50 });
      relay.start();
    }
  });

  it("keeps the rows of a batch whose publish failed, and publishes them later", async () => {
    await relay.stop();
    const failing = new Relay({
      from: outboxTable({ runTx: pgTransactions(pool, { synchronousCommit: false }) }),
      js: { publish: async () => Promise.reject(new Error("NATS is down")) } as never,
      subjects,
      source: "events-test",
      logger,
      pollMs: 60_000,
    });
    try {
      await runTx((tx) => enqueueEvent(tx, "ledger.credited", credit(110), { id: "evt_unpublished_110" }));
      await expect(failing.flush()).rejects.toThrow("NATS is down");
      expect((await pool.query("SELECT id FROM outbox_events")).rows).toEqual([{ id: "evt_unpublished_110" }]);
    } finally {
      relay = new Relay({ from: outboxTable({ runTx }), js: nc.jetstream(), subjects, source: "events-test", logger, pollMs: 50 });
      relay.start();
    }
    const c = await consumer();
    try {
      await waitFor(async () => (await sideEffects()).includes("evt_unpublished_110"));
      expect((await pool.query("SELECT count(*)::int AS n FROM outbox_events")).rows[0].n).toBe(0);
    } finally {
      await c.stop();
    }
  });

  it("drops malformed events without calling the handler", async () => {
    const c = await consumer();
    try {
      const h = natsHeaders();
      await nc.jetstream().publish(subjects.subject("ledger.credited"), new TextEncoder().encode('{"id":"evt_bad","type":"ledger.credited"}'), {
        msgID: "bad-1",
        headers: h,
      });
      await waitFor(() => logLines.some((l) => l.msg === "malformed event dropped"));
      expect(handled.some((e) => e.id === "evt_bad")).toBe(false);
    } finally {
      await c.stop();
    }
  });

  it("refuses a payload that does not match the catalog, before anything is written", async () => {
    await expect(runTx((tx) => enqueueEvent(tx, "ledger.credited", { ...credit(40), units: "12.5" }, { id: "evt_invalid" }))).rejects.toBeInstanceOf(
      InvalidEventError,
    );
    expect((await pool.query("SELECT count(*)::int AS n FROM outbox_events WHERE id = 'evt_invalid'")).rows[0].n).toBe(0);
  });
});
