import { randomBytes } from "node:crypto";
import pg from "pg";
import { AckPolicy, type JetStreamClient, type JetStreamManager, type NatsConnection } from "nats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectionConfig, databaseUrl, dropDatabase, ensureDatabase } from "@gateway/db-kit";
import { createLogger } from "@gateway/logger";
import { subjectsFor, type EventEnvelope } from "@gateway/events";
import {
  checkpointMoves,
  connectNats,
  ensureStream,
  Relay,
  tailedLog,
  pgTransactions,
  publishEnvelope,
  startCheckpointConsumer,
  type PoolLike,
  type RunningConsumer,
} from "./index.js";

const SERVER = process.env.DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
const NATS = process.env.NATS_URL ?? "nats://127.0.0.1:4222";
const run = randomBytes(4).toString("hex");
const dbName = `gw_test_tailing_${run}`;
const logger = createLogger({ service: "tailing-test", level: process.env.TAILING_TEST_LOG ?? "silent" });

let pool: pg.Pool;
let nc: NatsConnection;
let jsm: JetStreamManager;
let n = 0;

async function waitFor(check: () => boolean | Promise<boolean>, ms = 20_000): Promise<void> {
  const until = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > until) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 25));
  }
}

const credit = (i: number) => ({
  tenant_id: "ten_1",
  entry_id: `ent_${i}`,
  operation_id: `op_${i}`,
  units: String(i),
  available_units: String(i),
  reason: "test",
});

/** Every message of a stream: event ids in stream order. */
async function streamIds(subjects: ReturnType<typeof subjectsFor>): Promise<string[]> {
  const consumer = await nc.jetstream().consumers.get(subjects.stream);
  const ids: string[] = [];
  const info = await jsm.streams.info(subjects.stream);
  while (ids.length < info.state.messages) {
    const msg = await consumer.next({ expires: 2_000 });
    if (!msg) break;
    ids.push(msg.json<{ id: string }>().id);
  }
  return ids;
}

async function newStream(): Promise<ReturnType<typeof subjectsFor>> {
  const subjects = subjectsFor(`tt${run}${++n}`);
  await ensureStream(jsm, subjects);
  return subjects;
}

/** Appends `count` log rows in one transaction, numbered as the ledger numbers its transfers. */
async function append(log: string, count: number, holdMs = 0): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    if (holdMs > 0) await client.query(`SELECT pg_sleep(${holdMs / 1000})`);
    await client.query(`SELECT pg_advisory_xact_lock(hashtext('${log}'))`);
    await client.query(
      `INSERT INTO ${log} (seq, id, payload)
       SELECT coalesce((SELECT max(seq) FROM ${log}), 0) + i, 'evt_' || md5(random()::text), $1::jsonb FROM generate_series(1, $2) AS i`,
      [JSON.stringify(credit(1)), count],
    );
    // Commit late, still holding the lock: a later writer cannot number its rows before ours are visible.
    if (holdMs > 0) await client.query(`SELECT pg_sleep(${holdMs / 1000})`);
    await client.query("COMMIT");
  } finally {
    client.release();
  }
}

async function newLog(): Promise<string> {
  const log = `log_${++n}`;
  await pool.query(
    `CREATE TABLE ${log} (seq BIGINT PRIMARY KEY, id TEXT NOT NULL UNIQUE, payload JSONB NOT NULL, created_at TIMESTAMPTZ(3) NOT NULL DEFAULT now())`,
  );
  await pool.query(`CREATE VIEW ${log}_events AS SELECT seq, id, 'ledger.credited'::text AS type, payload, NULL::text AS request_id, created_at FROM ${log}`);
  return log;
}

type RelayExtra = Partial<Omit<ConstructorParameters<typeof Relay>[0], "from">> & { pool?: PoolLike; order?: "commit" | "transaction" };
const relayFor = (log: string, subjects: ReturnType<typeof subjectsFor>, { pool: from = pool, order, ...extra }: RelayExtra = {}) =>
  new Relay({
    from: tailedLog({ pool: from, log: `${log}_events`, checkpoint: log, ...(order ? { order } : {}) }),
    js: nc.jetstream(),
    subjects,
    source: "tailing-test",
    logger,
    pollMs: 50,
    lingerMs: 5,
    batchSize: 50,
    ...extra,
  });

async function ids(log: string): Promise<string[]> {
  return (await pool.query<{ id: string }>(`SELECT id FROM ${log} ORDER BY seq`)).rows.map((r) => r.id);
}

beforeAll(async () => {
  await ensureDatabase(SERVER, dbName);
  pool = new pg.Pool({ ...connectionConfig(databaseUrl(SERVER, dbName)), max: 30 });
  await pool.query(`
    CREATE TABLE relay_checkpoints (name TEXT PRIMARY KEY, position BIGINT NOT NULL, updated_at TIMESTAMPTZ(3) NOT NULL DEFAULT now());
    CREATE TABLE consumer_checkpoints (consumer TEXT PRIMARY KEY, stream_seq BIGINT NOT NULL, updated_at TIMESTAMPTZ(3) NOT NULL DEFAULT now());
    CREATE TABLE applied (consumer TEXT NOT NULL, event_id TEXT NOT NULL, stream_seq BIGINT, at BIGSERIAL);
  `);
  nc = await connectNats(NATS, "tailing-test");
  jsm = await nc.jetstreamManager();
});

afterAll(async () => {
  const streams = await jsm?.streams.names().next();
  for (const s of streams ?? []) if (s.startsWith(`tt${run}`)) await jsm.streams.delete(s).catch(() => undefined);
  await nc?.drain();
  await pool?.end();
  await dropDatabase(SERVER, dbName);
});

describe("Relay from a tailed log", () => {
  it("publishes every row of a log once and in order while writers commit concurrently, slowly and out of step", async () => {
    const log = await newLog();
    const subjects = await newStream();
    const relay = relayFor(log, subjects);
    // What work behind the relay hears (the settlement log's pruner, docs/decisions/0300).
    const heard: bigint[] = [];
    const stopListening = checkpointMoves.on(log, (position) => heard.push(position));
    relay.start();
    try {
      await Promise.all(Array.from({ length: 24 }, (_, i) => append(log, 1 + (i % 5), i % 3 === 0 ? 30 : 0).then(() => relay.kick())));
      const written = await ids(log);
      await waitFor(async () => (await jsm.streams.info(subjects.stream)).state.messages >= written.length);
      expect(await streamIds(subjects)).toEqual(written);
      const [cp] = (await pool.query<{ position: string }>("SELECT position::text FROM relay_checkpoints WHERE name = $1", [log])).rows;
      expect(cp!.position).toBe(String(written.length));
      // Every committed move, in order, ending at the committed checkpoint; polls that find nothing say nothing.
      await waitFor(() => heard.at(-1) === BigInt(written.length));
      expect(heard).toEqual([...heard].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
      expect(new Set(heard).size).toBe(heard.length);
      const count = heard.length;
      await new Promise((r) => setTimeout(r, 200));
      expect(heard).toHaveLength(count);
    } finally {
      stopListening();
      await relay.stop();
    }
  });

  it("loses nothing and publishes nothing twice when a publish fails, when the checkpoint write fails after the acks, and across restarts and two replicas", async () => {
    const log = await newLog();
    const subjects = await newStream();
    // A JetStream client whose first two publishes fail.
    let failures = 2;
    const js = nc.jetstream();
    const flaky = new Proxy(js, {
      get(target, prop, receiver) {
        if (prop === "publish")
          return (...args: Parameters<JetStreamClient["publish"]>) => (failures-- > 0 ? Promise.reject(new Error("nats down")) : target.publish(...args));
        return Reflect.get(target, prop, receiver);
      },
    }) as JetStreamClient;
    // A pool whose first checkpoint write (after the publishes were acknowledged) fails: the events go again.
    let cpFailures = 1;
    const flakyPool: PoolLike = {
      async connect() {
        const client = await pool.connect();
        return {
          query: (text: string, values?: unknown[]) => {
            if (text.startsWith("UPDATE relay_checkpoints") && cpFailures-- > 0) return Promise.reject(new Error("connection lost"));
            return client.query(text, values) as never;
          },
          release: (err?: Error | boolean) => client.release(err),
        };
      },
    };
    await append(log, 30);
    const first = relayFor(log, subjects, { js: flaky, pool: flakyPool, batchSize: 10 });
    first.start();
    await waitFor(async () => (await jsm.streams.info(subjects.stream)).state.messages >= 10);
    await first.stop();
    await append(log, 20);
    // Two replicas from here on.
    const a = relayFor(log, subjects);
    const b = relayFor(log, subjects);
    a.start();
    b.start();
    try {
      await Promise.all(Array.from({ length: 10 }, () => append(log, 3).then(() => (Math.random() < 0.5 ? a : b).kick())));
      const written = await ids(log);
      expect(written).toHaveLength(80);
      await waitFor(async () => (await jsm.streams.info(subjects.stream)).state.messages >= written.length);
      await new Promise((r) => setTimeout(r, 300));
      expect(failures).toBeLessThan(0);
      expect(cpFailures).toBeLessThan(0);
      // Each once. (Order holds per round, not across a failed one: events whose publish
      // succeeded before a sibling's failed are in the stream before their retried siblings.)
      const published = await streamIds(subjects);
      expect(published).toHaveLength(written.length);
      expect([...published].sort()).toEqual([...written].sort());
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });
});

describe("Relay from a tailed log, rows positioned by their transaction's id (order: transaction)", () => {
  /** A log whose seq is the writing transaction's id, as the usage records' is. */
  async function newTxLog(): Promise<string> {
    const log = `txlog_${++n}`;
    await pool.query(
      `CREATE TABLE ${log} (id TEXT PRIMARY KEY, seq BIGINT NOT NULL DEFAULT pg_current_xact_id()::text::bigint, created_at TIMESTAMPTZ(3) NOT NULL DEFAULT now());
       CREATE INDEX ON ${log} (seq)`,
    );
    await pool.query(
      `CREATE VIEW ${log}_events AS SELECT seq, id, 'ledger.credited'::text AS type, jsonb_build_object('tenant_id', 'ten_1', 'entry_id', id,
         'operation_id', id, 'units', '1', 'available_units', '1', 'reason', 'test') AS payload, NULL::text AS request_id, created_at FROM ${log}`,
    );
    return log;
  }
  const insert = (q: { query: (text: string) => Promise<unknown> }, log: string, count: number) =>
    q.query(`INSERT INTO ${log} (id) SELECT 'evt_' || md5(random()::text) FROM generate_series(1, ${count})`);
  const inStreamOrder = async (log: string) => (await pool.query<{ id: string }>(`SELECT id FROM ${log} ORDER BY seq, id`)).rows.map((r) => r.id);
  const published = async (subjects: ReturnType<typeof subjectsFor>) => (await jsm.streams.info(subjects.stream)).state.messages;

  it("publishes nothing past a transaction still running, then everything once, in transaction order, without a kick or a poll", async () => {
    const log = await newTxLog();
    const subjects = await newStream();
    // Polls a minute apart: only the relay's own retry of blocked rows can publish them in time.
    const relay = relayFor(log, subjects, { order: "transaction", pollMs: 60_000 });
    relay.start();
    const older = await pool.connect();
    try {
      await older.query("BEGIN");
      await insert(older, log, 3);
      // Ten later transactions commit while the older one still runs, each kicking the relay.
      for (let i = 0; i < 10; i++) {
        await insert(pool, log, 1 + (i % 3));
        relay.kick();
      }
      await new Promise((r) => setTimeout(r, 400));
      expect(await published(subjects)).toBe(0);
      await older.query("COMMIT");
      const written = await inStreamOrder(log);
      expect(written).toHaveLength(3 + 19);
      await waitFor(async () => (await published(subjects)) >= written.length, 3_000);
      await new Promise((r) => setTimeout(r, 200));
      // The older transaction's rows first: its id is the smallest.
      expect(await streamIds(subjects)).toEqual(written);
    } finally {
      older.release();
      await relay.stop();
    }
  });

  it("is not held back by a transaction running in another database", async () => {
    const log = await newTxLog();
    const subjects = await newStream();
    const relay = relayFor(log, subjects, { order: "transaction", pollMs: 60_000 });
    relay.start();
    // Older than every row below, and still running while they are published: another service's.
    const elsewhere = new pg.Client(connectionConfig(databaseUrl(SERVER, "postgres")));
    await elsewhere.connect();
    try {
      await elsewhere.query("BEGIN");
      await elsewhere.query("SELECT pg_current_xact_id()");
      for (let i = 0; i < 5; i++) {
        await insert(pool, log, 2);
        relay.kick();
      }
      const written = await inStreamOrder(log);
      await waitFor(async () => (await published(subjects)) >= written.length, 3_000);
      expect(await streamIds(subjects)).toEqual(written);
    } finally {
      await elsewhere.query("ROLLBACK").catch(() => undefined);
      await elsewhere.end();
      await relay.stop();
    }
  });

  it("takes a transaction whole when it holds more rows than a batch", async () => {
    const log = await newTxLog();
    const subjects = await newStream();
    await insert(pool, log, 25);
    await insert(pool, log, 5);
    const relay = relayFor(log, subjects, { order: "transaction", batchSize: 10 });
    expect(await relay.flush()).toBe(30);
    expect(await streamIds(subjects)).toEqual(await inStreamOrder(log));
    const [cp] = (await pool.query<{ position: string }>("SELECT position::text FROM relay_checkpoints WHERE name = $1", [log])).rows;
    const [last] = (await pool.query<{ seq: string }>(`SELECT max(seq)::text AS seq FROM ${log}`)).rows;
    expect(cp!.position).toBe(last!.seq);
  });
});

describe("checkpoint consumer", () => {
  async function publish(subjects: ReturnType<typeof subjectsFor>, from: number, to: number): Promise<string[]> {
    const out: string[] = [];
    for (let i = from; i < to; i++) {
      const envelope: EventEnvelope = {
        id: `evt_${subjects.namespace}_${i}`,
        type: "ledger.credited",
        source: "t",
        occurred_at: new Date().toISOString(),
        request_id: null,
        data: credit(i),
      };
      await publishEnvelope(nc.jetstream(), subjects, envelope);
      out.push(envelope.id);
    }
    return out;
  }

  const start = (subjects: ReturnType<typeof subjectsFor>, name: string, fail: (id: string) => boolean = () => false) =>
    startCheckpointConsumer({
      js: nc.jetstream(),
      jsm,
      subjects,
      name,
      types: [],
      runTx: pgTransactions(pool),
      logger,
      lingerMs: 5,
      maxBatch: 7,
      handler: async (events, tx) => {
        for (const e of events) if (fail(e.id)) throw new Error(`fails on ${e.id}`);
        await tx.$executeRawUnsafe(
          "INSERT INTO applied (consumer, event_id) SELECT $1, unnest($2::text[])",
          name,
          events.map((e) => e.id),
        );
      },
    });

  const applied = async (name: string) =>
    (await pool.query<{ event_id: string }>("SELECT event_id FROM applied WHERE consumer = $1 ORDER BY at", [name])).rows.map((r) => r.event_id);

  it("applies every event once, in stream order, across restarts, a failing event and two replicas; one checkpoint row, no row per event", {
    timeout: 90_000,
  }, async () => {
    const subjects = await newStream();
    const name = `cp-${n}`;
    const all = await publish(subjects, 0, 40);
    let c: RunningConsumer = await start(subjects, name);
    await waitFor(async () => (await applied(name)).length >= 10);
    await c.stop(); // in the middle: what is not committed comes again
    all.push(...(await publish(subjects, 40, 60)));
    // Event 45 fails twice: nothing after it is applied before it.
    let failing = 2;
    c = await start(subjects, name, (id) => id.endsWith("_45") && failing-- > 0);
    all.push(...(await publish(subjects, 60, 80)));
    await waitFor(async () => (await applied(name)).length >= all.length, 30_000);
    expect(failing).toBeLessThan(0);
    // A second replica reading the same stream: still once each.
    const replica = await start(subjects, name);
    all.push(...(await publish(subjects, 80, 100)));
    try {
      await waitFor(async () => (await applied(name)).length >= all.length, 30_000);
      await new Promise((r) => setTimeout(r, 300));
      expect(await applied(name)).toEqual(all);
      const { rows } = await pool.query<{ stream_seq: string }>("SELECT stream_seq::text FROM consumer_checkpoints WHERE consumer = $1", [name]);
      expect(rows).toEqual([{ stream_seq: String(all.length) }]);
    } finally {
      await Promise.all([c.stop(), replica.stop()]);
    }
  });

  it("takes over from a durable consumer of the same name after its acknowledged floor, and removes it", async () => {
    const subjects = await newStream();
    const name = `cp-${n}`;
    const all = await publish(subjects, 0, 12);
    await jsm.consumers.add(subjects.stream, { durable_name: name, ack_policy: AckPolicy.Explicit });
    const durable = await nc.jetstream().consumers.get(subjects.stream, name);
    for (let i = 0; i < 5; i++) {
      const msg = await durable.next({ expires: 2_000 });
      await msg!.ackAck();
    }
    const c = await start(subjects, name);
    try {
      await waitFor(async () => (await applied(name)).length >= 7);
      await new Promise((r) => setTimeout(r, 200));
      expect(await applied(name)).toEqual(all.slice(5));
      await expect(jsm.consumers.info(subjects.stream, name)).rejects.toThrow();
    } finally {
      await c.stop();
    }
  });
});
