import { randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";
import { headers as natsHeaders, type JetStreamManager, type NatsConnection } from "nats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPool, databaseUrl, dropDatabase, prepareDatabase } from "@gateway/db-kit";
import { subjectsFor, type EventEnvelope } from "@gateway/events";
import {
  connectNats,
  ensureStream,
  JetStreamPublisher,
  pgTransactions,
  publishEnvelope,
  publishStored,
  startCheckpointConsumer,
  type StoredEvent,
  type PoolLike,
  type RunningConsumer,
} from "@gateway/events-runtime";
import { createLogger } from "@gateway/logger";
import { TcpProxy } from "@gateway/testkit";
import { recordAuditEvents } from "./record.js";

// The audit consumer as jobs runs it (decision 0166): checkpointed, commits that do not wait
// for the disk, envelopes checked for shape only, one insert per batch.

const SERVER = process.env.DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
const NATS = process.env.NATS_URL ?? "nats://127.0.0.1:4222";
const PRISMA_DIR = fileURLToPath(new URL("../../../prisma", import.meta.url));
const run = randomBytes(4).toString("hex");
const dbName = `gw_test_audit_${run}`;
const logger = createLogger({ service: "audit-test", level: process.env.AUDIT_TEST_LOG ?? "silent" });

let pool: ReturnType<typeof createPool>;
let nc: NatsConnection;
let jsm: JetStreamManager;
let publisher: JetStreamPublisher;
let n = 0;

beforeAll(async () => {
  const url = await prepareDatabase({
    serverUrl: SERVER,
    name: dbName,
    schemaPath: `${PRISMA_DIR}/schema.prisma`,
    migrationsDir: `${PRISMA_DIR}/migrations`,
    migrate: true,
  });
  pool = createPool(url, { poolSize: 4 });
  nc = await connectNats(NATS, "audit-test");
  jsm = await nc.jetstreamManager();
  publisher = new JetStreamPublisher(nc);
});

afterAll(async () => {
  publisher?.close();
  await nc?.drain();
  await pool?.end();
  await dropDatabase(SERVER, dbName);
});

async function waitFor(check: () => boolean | Promise<boolean>, ms = 20_000): Promise<void> {
  const until = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > until) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Every message sent to the database, one entry per round trip, by transaction. */
type Trace = { transactions: string[][]; failCommitOnce: boolean };

/**
 * The pool with every round trip recorded; `failCommitOnce` breaks the next COMMIT's message (a
 * crash before it). One wrapper per connection, as pg.Pool hands out the same client object.
 */
function tracedPool(trace: Trace): PoolLike {
  type Wrapped = { messages: string[]; client: Awaited<ReturnType<PoolLike["connect"]>> };
  const wrappers = new WeakMap<object, Wrapped>();
  return {
    async connect() {
      const raw = await pool.connect();
      let wrapped = wrappers.get(raw);
      if (!wrapped) {
        const w: Wrapped = {
          messages: [],
          client: {
            query: async (text: string, values?: unknown[]) => {
              w.messages.push(text);
              if (/^UPDATE consumer_checkpoints.*COMMIT$/.test(text) && trace.failCommitOnce) {
                trace.failCommitOnce = false;
                throw new Error("connection lost before the commit");
              }
              return raw.query(text, values) as never;
            },
            release: (err?: Error | boolean) => raw.release(err),
          },
        };
        wrapped = w;
        wrappers.set(raw, w);
      }
      wrapped.messages = [];
      trace.transactions.push(wrapped.messages);
      return wrapped.client;
    },
  };
}

async function newStream(): Promise<ReturnType<typeof subjectsFor>> {
  const subjects = subjectsFor(`au${run}${++n}`);
  await ensureStream(jsm, subjects);
  return subjects;
}

const envelope = (subjects: ReturnType<typeof subjectsFor>, i: number): EventEnvelope => ({
  id: `evt_${subjects.namespace}_${i}`,
  type: "key.created",
  source: "test",
  occurred_at: new Date().toISOString(),
  request_id: `req_${i}`,
  data: { key_id: `key_${i}`, tenant_id: "ten_1", name: `key ${i}`, prefix: `gw_${i}`, actor: null },
});

async function publish(subjects: ReturnType<typeof subjectsFor>, from: number, to: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = from; i < to; i++) {
    const e = envelope(subjects, i);
    await publishEnvelope(publisher, subjects, e);
    ids.push(e.id);
  }
  return ids;
}

function startAudit(subjects: ReturnType<typeof subjectsFor>, name: string, trace: Trace, maxBatch = 10): Promise<RunningConsumer> {
  return startCheckpointConsumer({
    js: nc.jetstream(),
    jsm,
    subjects,
    name,
    types: [],
    runTx: pgTransactions(tracedPool(trace), { synchronousCommit: false }),
    logger,
    handler: (events, tx) => recordAuditEvents({ tx, events }),
    maxBatch,
    lingerMs: 20,
    trustPayloads: true,
  });
}

async function audited(subjects: ReturnType<typeof subjectsFor>): Promise<string[]> {
  const { rows } = await pool.query<{ event_id: string }>("SELECT event_id FROM audit_events WHERE event_id LIKE $1 ORDER BY event_id", [
    `evt_${subjects.namespace}_%`,
  ]);
  return rows.map((r) => r.event_id);
}

const checkpoint = async (name: string) =>
  Number((await pool.query<{ stream_seq: string }>("SELECT stream_seq FROM consumer_checkpoints WHERE consumer = $1", [name])).rows[0]?.stream_seq);
const sorted = (ids: string[]) => [...ids].sort();

describe("the audit consumer", () => {
  it("writes a batch in three round trips: BEGIN with synchronous_commit off and the checkpoint's lock (prepared), one insert, the checkpoint's move with COMMIT", async () => {
    const subjects = await newStream();
    const name = `audit-${n}`;
    const ids = await publish(subjects, 0, 10);
    const trace: Trace = { transactions: [], failCommitOnce: false };
    const c = await startAudit(subjects, name, trace, 10);
    try {
      await waitFor(async () => (await checkpoint(name)) === 10);
      expect(await audited(subjects)).toEqual(sorted(ids));
      const batches = trace.transactions.filter((t) => t.some((m) => m.includes("audit_events")));
      expect(batches.length).toBeGreaterThan(0);
      for (const messages of batches) {
        expect(messages).toHaveLength(3);
        // The lock is the session's prepared statement: PREPAREd with the connection's first batch.
        expect(messages[0]).toMatch(
          /^BEGIN; SET LOCAL synchronous_commit = off; (PREPARE "checkpoint_lock_audit-\d+" AS SELECT stream_seq FROM consumer_checkpoints .* FOR UPDATE; )?EXECUTE "checkpoint_lock_audit-\d+"$/,
        );
        expect(messages[1]).toMatch(/^\s*INSERT INTO audit_events/);
        expect(messages[2]).toMatch(/^UPDATE consumer_checkpoints SET stream_seq = \d+, .*; COMMIT$/);
      }
      // The events of a batch in one statement: fewer inserts than events.
      expect(batches.length).toBeLessThan(ids.length);
    } finally {
      await c.stop();
    }
  });

  it("loses and doubles nothing when a batch's commit fails, when it stops mid-stream, and when its last commits are lost in a database crash", async () => {
    const subjects = await newStream();
    const name = `audit-${n}`;
    const trace: Trace = { transactions: [], failCommitOnce: true };
    const all = await publish(subjects, 0, 25);
    let c = await startAudit(subjects, name, trace, 7);
    // The first batch's COMMIT never arrives: its insert is rolled back and the batch goes again.
    await waitFor(async () => (await audited(subjects)).length >= 7);
    expect(trace.failCommitOnce).toBe(false);
    await c.stop(); // a restart, wherever it falls
    all.push(...(await publish(subjects, 25, 40)));
    c = await startAudit(subjects, name, trace, 7);
    try {
      await waitFor(async () => (await checkpoint(name)) === 40);
      expect(await audited(subjects)).toEqual(sorted(all));
      // A database crash loses the last asynchronous commits: rows and checkpoint together.
      await pool.query("DELETE FROM audit_events WHERE event_id = ANY($1)", [all.slice(30)]);
      await pool.query("UPDATE consumer_checkpoints SET stream_seq = 30 WHERE consumer = $1", [name]);
      all.push(...(await publish(subjects, 40, 45)));
      await waitFor(async () => (await checkpoint(name)) === 45);
      expect(await audited(subjects)).toEqual(sorted(all));
    } finally {
      await c.stop();
    }
  });

  it("stores no copy of the events their producer keeps (a usage record's, the ledger's), and writes nothing for a batch of only those", async () => {
    const subjects = await newStream();
    const name = `audit-${n}`;
    const trace: Trace = { transactions: [], failCommitOnce: false };
    const kept: EventEnvelope[] = [
      {
        id: `evt_${subjects.namespace}_settled`,
        type: "managed_ai.request_settled",
        source: "managed-ai",
        occurred_at: new Date().toISOString(),
        request_id: "req_kept",
        data: { request_id: "req_kept", tenant_id: "ten_1", key_id: null, status: "completed", reserved_units: "9", final_units: "4", error_code: null },
      },
      {
        id: `evt_${subjects.namespace}_posted`,
        type: "ledger.posted",
        source: "ledger",
        occurred_at: new Date().toISOString(),
        request_id: "req_kept",
        data: {
          tenant_id: "ten_1",
          hold_id: "hld_1",
          entry_id: "trf_1",
          operation_id: "post:req_kept",
          units: "4",
          available_units: "90",
          reserved_units: "6",
        },
      },
    ];
    // One alone each (as producers before docs/decisions/0331 sent them), then as relays send them now: a batch per prefix.
    for (const e of kept) await publishEnvelope(publisher, subjects, e);
    const stored = (e: EventEnvelope): StoredEvent => ({ id: `${e.id}_b`, type: e.type, payload: e.data, request_id: e.request_id, created_at: e.occurred_at });
    await publishStored(publisher, subjects, "test", kept.map(stored), 5_000);
    expect((await jsm.streams.info(subjects.stream)).state.messages).toBe(4);
    const c = await startAudit(subjects, name, trace, 10);
    try {
      await waitFor(async () => (await checkpoint(name)) === 4);
      expect(await audited(subjects)).toEqual([]);
      // The checkpoint moved without an insert.
      expect(trace.transactions.flat().some((m) => m.includes("INSERT INTO audit_events"))).toBe(false);
      const ids = await publish(subjects, 0, 2);
      await waitFor(async () => (await checkpoint(name)) === 6);
      expect(await audited(subjects)).toEqual(sorted(ids));
    } finally {
      await c.stop();
    }
  });

  it("ignores a copy of an event delivered again beyond JetStream's duplicate window (same event id, new message)", async () => {
    const subjects = await newStream();
    const name = `audit-${n}`;
    const trace: Trace = { transactions: [], failCommitOnce: false };
    const ids = await publish(subjects, 0, 3);
    // The relay re-published event 1 after the window: a new stream message with the same event id.
    const copy = { ...envelope(subjects, 1), occurred_at: new Date(0).toISOString() };
    await publisher.publish(subjects.subject(copy.type), new TextEncoder().encode(JSON.stringify(copy)), {
      msgID: `${copy.id}-again`,
      headers: natsHeaders(),
      timeout: 5_000,
    });
    const c = await startAudit(subjects, name, trace);
    try {
      await waitFor(async () => (await checkpoint(name)) === 4);
      expect(await audited(subjects)).toEqual(sorted(ids));
      const { rows } = await pool.query<{ occurred_at: Date }>("SELECT occurred_at FROM audit_events WHERE event_id = $1", [copy.id]);
      expect(rows).toHaveLength(1);
      expect(rows[0]!.occurred_at.getTime()).not.toBe(0); // the first copy stays
    } finally {
      await c.stop();
    }
  });

  it("loses and doubles nothing across a NATS outage and a PostgreSQL restart (its sessions ended by the server, connections refused for a while)", {
    timeout: 90_000,
  }, async () => {
    const subjects = await newStream();
    const name = `audit-${n}`;
    // The consumer's process reaches NATS and PostgreSQL through proxies this test can cut.
    const natsTarget = new URL(NATS.replace(/^nats:/, "http:"));
    const natsProxy = new TcpProxy(natsTarget.hostname, Number(natsTarget.port || 4222));
    const pgTarget = new URL(SERVER);
    const pgProxy = new TcpProxy(pgTarget.hostname, Number(pgTarget.port || 5432));
    await Promise.all([natsProxy.start(), pgProxy.start()]);
    const proxied = new URL(SERVER);
    proxied.host = `127.0.0.1:${pgProxy.port}`;
    const cpool = createPool(databaseUrl(proxied.toString(), dbName), { poolSize: 2 });
    const cnc = await connectNats(`nats://127.0.0.1:${natsProxy.port}`, "audit-under-faults");
    const c = await startCheckpointConsumer({
      js: cnc.jetstream(),
      jsm: await cnc.jetstreamManager(),
      subjects,
      name,
      types: [],
      runTx: pgTransactions(cpool, { synchronousCommit: false }),
      logger,
      handler: (events, tx) => recordAuditEvents({ tx, events }),
      maxBatch: 10,
      lingerMs: 20,
      trustPayloads: true,
    });
    const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
    const publishSteadily = async (from: number, to: number) => {
      const ids: string[] = [];
      for (let i = from; i < to; i += 2) {
        ids.push(...(await publish(subjects, i, Math.min(i + 2, to))));
        await sleep(20);
      }
      return ids;
    };
    try {
      const all = await publish(subjects, 0, 20);
      await waitFor(async () => (await checkpoint(name)) === 20);
      // A NATS outage as the consumer sees it: its connection dropped, reconnects refused for
      // 1.5 s, while events keep arriving in the stream.
      const during = publishSteadily(20, 50);
      await sleep(50);
      natsProxy.block();
      await sleep(1_500);
      natsProxy.unblock();
      all.push(...(await during));
      all.push(...(await publish(subjects, 50, 60)));
      await waitFor(async () => (await checkpoint(name)) === 60, 30_000);
      expect(await audited(subjects)).toEqual(sorted(all));
      // A PostgreSQL restart while events arrive: its sessions ended by the server (as a fast
      // shutdown ends them), then connections refused for 1.5 s.
      const later = publishSteadily(60, 90);
      await sleep(50);
      const ended = await pool.query(
        `WITH theirs AS MATERIALIZED (SELECT pid FROM pg_stat_activity WHERE datname = $1 AND client_port = ANY($2::int[]) AND pid <> pg_backend_pid())
         SELECT pid FROM theirs WHERE pg_terminate_backend(pid)`,
        [dbName, pgProxy.clientPorts],
      );
      pgProxy.block();
      expect(ended.rowCount).toBeGreaterThan(0);
      await sleep(1_500);
      pgProxy.unblock();
      all.push(...(await later));
      all.push(...(await publish(subjects, 90, 100)));
      await waitFor(async () => (await checkpoint(name)) === 100, 30_000);
      await sleep(300);
      // Every event once (the checkpoint moved over all 100 stream positions, one row each).
      expect(await audited(subjects)).toEqual(sorted(all));
      expect(await checkpoint(name)).toBe(100);
    } finally {
      natsProxy.unblock();
      pgProxy.unblock();
      await c.stop();
      await cnc.close();
      await cpool.end();
      await Promise.all([natsProxy.close(), pgProxy.close()]);
    }
  });
});
