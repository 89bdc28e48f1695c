import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { createConnection } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { JetStreamManager, NatsConnection } from "nats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPool, databaseUrl, dropDatabase, ensureDatabase } from "@gateway/db-kit";
import { createLogger } from "@gateway/logger";
import { freePort, TcpProxy } from "@gateway/testkit";
import { subjectsFor, type Subjects } from "@gateway/events";
import {
  connectNats,
  ensureStream,
  JetStreamPublisher,
  outboxTable,
  Relay,
  pgTransactions,
  startCheckpointConsumer,
  startConsumer,
  tailedLog,
  type JsPublish,
  type RunningConsumer,
} from "./index.js";

// The relays and both kinds of consumer under the faults of a real deployment, against a real
// PostgreSQL and a real NATS: a process that dies in the middle of a batch (its connections cut
// after part of the batch went out, before its checkpoint or commit), a NATS outage (a
// nats-server of this test's own, killed with SIGKILL and started again on its store), and a
// PostgreSQL restart (every backend of the relay and the consumers terminated, new connections
// refused for a while, through a TCP proxy this test controls). Each case checks that every
// committed event is in the stream once and that each consumer applied it once.

const SERVER = process.env.DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
const NATS_SERVER = process.env.NATS_SERVER_BIN ?? "/usr/sbin/nats-server";
const run = randomBytes(4).toString("hex");
const dbName = `gw_test_faults_${run}`;
const logger = createLogger({ service: "faults-test", level: process.env.FAULTS_TEST_LOG ?? "silent" });

const pgTarget = new URL(SERVER);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function waitFor(check: () => boolean | Promise<boolean>, ms = 45_000, what = "condition"): Promise<void> {
  const until = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

const portOpen = (port: number) =>
  new Promise<boolean>((resolve) => {
    const s = createConnection(port, "127.0.0.1");
    s.once("connect", () => {
      s.destroy();
      resolve(true);
    });
    s.once("error", () => resolve(false));
  });

/** A nats-server with JetStream of this test's own: its port and store survive a kill and a start. */
class NatsServer {
  private child: ChildProcess | undefined;
  private readonly dir = mkdtempSync(join(tmpdir(), "faults-nats-"));
  port = 0;

  get url(): string {
    return `nats://127.0.0.1:${this.port}`;
  }

  get running(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  async start(): Promise<void> {
    if (this.running) return;
    if (!existsSync(NATS_SERVER)) throw new Error(`${NATS_SERVER} not found: apt-get install nats-server, or set NATS_SERVER_BIN`);
    this.port ||= await freePort();
    this.child = spawn(NATS_SERVER, ["-a", "127.0.0.1", "-p", String(this.port), "-js", "-sd", this.dir], { stdio: "ignore" });
    await waitFor(() => portOpen(this.port), 10_000, "nats-server");
  }

  async kill(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once("exit", r));
    child.kill("SIGKILL");
    await exited;
  }

  async close(): Promise<void> {
    await this.kill();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

let direct: ReturnType<typeof createPool>;
let nats: NatsServer;
let proxy: TcpProxy;
let admin: NatsConnection;
let jsm: JetStreamManager;
let n = 0;
const closers: (() => Promise<unknown> | unknown)[] = [];

/** A service's pool, through the proxy (what a PostgreSQL restart cuts). */
function servicePool() {
  const proxied = new URL(SERVER);
  proxied.host = `127.0.0.1:${proxy.port}`;
  const pool = createPool(databaseUrl(proxied.toString(), dbName), { poolSize: 4 });
  closers.push(() => pool.end().catch(() => undefined));
  return pool;
}

async function serviceNats(name: string): Promise<NatsConnection> {
  const nc = await connectNats(nats.url, name);
  closers.push(() => nc.close().catch(() => undefined));
  return nc;
}

beforeAll(async () => {
  await ensureDatabase(SERVER, dbName);
  direct = createPool(databaseUrl(SERVER, dbName), { poolSize: 6 });
  await direct.query(`
    CREATE TABLE outbox_events (seq BIGSERIAL PRIMARY KEY, id TEXT NOT NULL UNIQUE, type TEXT NOT NULL, payload JSONB NOT NULL,
      request_id TEXT, created_at TIMESTAMPTZ(3) NOT NULL DEFAULT now());
    CREATE TABLE relay_checkpoints (name TEXT PRIMARY KEY, position BIGINT NOT NULL, updated_at TIMESTAMPTZ(3) NOT NULL DEFAULT now());
    CREATE TABLE consumer_checkpoints (consumer TEXT PRIMARY KEY, stream_seq BIGINT NOT NULL, updated_at TIMESTAMPTZ(3) NOT NULL DEFAULT now());
    CREATE TABLE processed_events (consumer TEXT NOT NULL, event_id TEXT NOT NULL, processed_at TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
      PRIMARY KEY (consumer, event_id));
    CREATE TABLE applied (consumer TEXT NOT NULL, event_id TEXT NOT NULL, at BIGSERIAL);
  `);
  nats = new NatsServer();
  await nats.start();
  // A relay in front of PostgreSQL: `block()` drops every connection and refuses new ones.
  proxy = new TcpProxy(pgTarget.hostname.replace(/^\[|\]$/g, ""), Number(pgTarget.port || 5432));
  await proxy.start();
  admin = await connectNats(nats.url, "faults-admin");
  jsm = await admin.jetstreamManager();
}, 30_000);

afterAll(async () => {
  for (const close of closers.reverse()) await close();
  await admin?.close().catch(() => undefined);
  await nats?.close();
  await proxy?.close();
  await direct?.end();
  await dropDatabase(SERVER, dbName);
}, 30_000);

const payload = (i: number) =>
  JSON.stringify({ tenant_id: "ten_1", entry_id: `ent_${i}`, operation_id: `op_${i}`, units: String(i), available_units: String(i), reason: "test" });

/** One relay under test: how its events are committed, and the relay over a pool and a publisher. */
type RelayKind = {
  name: string;
  /** Prepares a fresh source for one case (an empty outbox, a new log). */
  prepare(tag: string): Promise<{
    /** Commits `count` events (the service's writes; straight to PostgreSQL) and returns their ids. */
    write(count: number): Promise<string[]>;
    relay(pool: ReturnType<typeof createPool>, js: JsPublish, subjects: Subjects): Relay;
  }>;
};

const relayOptions = { source: "faults-test", logger, pollMs: 50, lingerMs: 5, batchSize: 20, publishTimeoutMs: 1_500 };

const kinds: RelayKind[] = [
  {
    name: "Relay from the outbox",
    async prepare(tag) {
      await direct.query("DELETE FROM outbox_events");
      let i = 0;
      return {
        async write(count) {
          const ids = Array.from({ length: count }, () => `evt_${tag}_${++i}`);
          await direct.query("INSERT INTO outbox_events (id, type, payload) SELECT id, 'ledger.credited', $2::jsonb FROM unnest($1::text[]) AS id", [
            ids,
            payload(i),
          ]);
          return ids;
        },
        relay: (pool, js, subjects) =>
          new Relay({ ...relayOptions, from: outboxTable({ runTx: pgTransactions(pool, { synchronousCommit: false }) }), js, subjects }),
      };
    },
  },
  {
    name: "Relay from a tailed log",
    async prepare(tag) {
      const log = `log_${tag}`;
      await direct.query(
        `CREATE TABLE ${log} (seq BIGINT PRIMARY KEY, id TEXT NOT NULL UNIQUE, payload JSONB NOT NULL, created_at TIMESTAMPTZ(3) NOT NULL DEFAULT now())`,
      );
      await direct.query(
        `CREATE VIEW ${log}_events AS SELECT seq, id, 'ledger.credited'::text AS type, payload, NULL::text AS request_id, created_at FROM ${log}`,
      );
      let i = 0;
      return {
        async write(count) {
          const ids = Array.from({ length: count }, () => `evt_${tag}_${++i}`);
          // Numbered under a lock held to the commit, as the ledger numbers its transfers.
          const client = await direct.connect();
          try {
            await client.query("BEGIN");
            await client.query(`SELECT pg_advisory_xact_lock(hashtext('${log}'))`);
            await client.query(
              `INSERT INTO ${log} (seq, id, payload) SELECT coalesce((SELECT max(seq) FROM ${log}), 0) + o, id, $2::jsonb FROM unnest($1::text[]) WITH ORDINALITY AS u(id, o)`,
              [ids, payload(i)],
            );
            await client.query("COMMIT");
          } finally {
            client.release();
          }
          return ids;
        },
        relay: (pool, js, subjects) => new Relay({ ...relayOptions, from: tailedLog({ pool, log: `${log}_events`, checkpoint: log }), js, subjects }),
      };
    },
  },
  {
    name: "Relay from a tailed log, rows positioned by their transaction's id",
    async prepare(tag) {
      const log = `txlog_${tag}`;
      await direct.query(
        `CREATE TABLE ${log} (id TEXT PRIMARY KEY, seq BIGINT NOT NULL DEFAULT pg_current_xact_id()::text::bigint, payload JSONB NOT NULL,
           created_at TIMESTAMPTZ(3) NOT NULL DEFAULT now())`,
      );
      await direct.query(
        `CREATE VIEW ${log}_events AS SELECT seq, id, 'ledger.credited'::text AS type, payload, NULL::text AS request_id, created_at FROM ${log}`,
      );
      let i = 0;
      return {
        async write(count) {
          // Zero-padded: within one transaction the relay publishes in id order.
          const ids = Array.from({ length: count }, () => `evt_${tag}_${String(++i).padStart(8, "0")}`);
          // No lock: the transaction's id is the position (as the usage records' events).
          await direct.query(`INSERT INTO ${log} (id, payload) SELECT id, $2::jsonb FROM unnest($1::text[]) AS id`, [ids, payload(i)]);
          return ids;
        },
        relay: (pool, js, subjects) =>
          new Relay({ ...relayOptions, from: tailedLog({ pool, log: `${log}_events`, checkpoint: log, order: "transaction" }), js, subjects }),
      };
    },
  },
];

/** Event ids in the stream, in stream order (read by a consumer of the admin connection). */
async function streamIds(subjects: Subjects): Promise<string[]> {
  const info = await jsm.streams.info(subjects.stream);
  const consumer = await admin.jetstream().consumers.get(subjects.stream);
  const ids: string[] = [];
  while (ids.length < info.state.messages) {
    const msg = await consumer.next({ expires: 2_000 });
    if (!msg) break;
    ids.push(msg.json<{ id: string }>().id);
  }
  return ids;
}

const streamCount = async (subjects: Subjects) => {
  try {
    return (await jsm.streams.info(subjects.stream)).state.messages;
  } catch {
    return -1; // NATS down
  }
};

const applied = async (consumer: string) =>
  (await direct.query<{ event_id: string }>("SELECT event_id FROM applied WHERE consumer = $1 ORDER BY at", [consumer])).rows.map((r) => r.event_id);

/**
 * The two consumers of a case, each in its own "process" (its own pool through the proxy and its
 * own NATS connection): a checkpointing consumer as the audit trail runs it (commits that do not
 * wait for the disk) and a durable one (processed_events). `die` makes the next batch of a
 * consumer end its own backend (pg_terminate_backend) after its insert, before the commit, and
 * every later batch of that instance fail: a process that died in the middle of a batch.
 */
type Consumers = {
  names: { checkpoint: string; durable: string };
  die: { checkpoint: boolean; durable: boolean };
  died: { checkpoint: boolean; durable: boolean };
  /** Stops the consumers (as a process that ended) and starts new ones under the same names. */
  restart(): Promise<void>;
  stop(): Promise<void>;
};

async function startConsumers(subjects: Subjects, tag: string): Promise<Consumers> {
  const names = { checkpoint: `cp-${tag}`, durable: `du-${tag}` };
  const die = { checkpoint: false, durable: false };
  const died = { checkpoint: false, durable: false };
  let running: RunningConsumer[] = [];

  const handler = (which: "checkpoint" | "durable") => {
    let dead = false;
    return async (events: { id: string }[], tx: { $executeRawUnsafe(q: string, ...v: unknown[]): PromiseLike<number> }) => {
      if (dead) throw new Error("this consumer process is dead");
      await tx.$executeRawUnsafe(
        "INSERT INTO applied (consumer, event_id) SELECT $1, unnest($2::text[])",
        names[which],
        events.map((e) => e.id),
      );
      if (die[which]) {
        die[which] = false;
        dead = true;
        died[which] = true;
        await tx.$executeRawUnsafe("SELECT pg_terminate_backend(pg_backend_pid())");
      }
    };
  };

  async function start(): Promise<void> {
    const pool = servicePool();
    const nc = await serviceNats(`consumers-${tag}`);
    const js = nc.jetstream();
    const cjsm = await nc.jetstreamManager();
    running = [
      await startCheckpointConsumer({
        js,
        jsm: cjsm,
        subjects,
        name: names.checkpoint,
        types: [],
        runTx: pgTransactions(pool, { synchronousCommit: false }),
        logger,
        handler: handler("checkpoint"),
        maxBatch: 10,
        lingerMs: 5,
        trustPayloads: true,
      }),
      await startConsumer({
        js,
        jsm: cjsm,
        subjects,
        durable: names.durable,
        types: [],
        runTx: pgTransactions(pool),
        logger,
        handler: handler("durable"),
        maxBatch: 10,
        lingerMs: 5,
        ackWaitMs: 2_000,
      }),
    ];
    closers.push(() => Promise.all(running.map((c) => c.stop())));
  }

  await start();
  return {
    names,
    die,
    died,
    async restart() {
      await Promise.all(running.map((c) => c.stop()));
      await start();
    },
    async stop() {
      await Promise.all(running.map((c) => c.stop()));
      running = [];
    },
  };
}

/** Waits until the stream and both consumers have everything written, then checks: once each. */
async function expectEachOnce(subjects: Subjects, consumers: Consumers, written: string[]): Promise<void> {
  const want = [...written].sort();
  await waitFor(async () => (await streamCount(subjects)) >= written.length, 45_000, "the stream");
  await waitFor(async () => (await applied(consumers.names.checkpoint)).length >= written.length, 45_000, "the checkpoint consumer");
  await waitFor(async () => (await applied(consumers.names.durable)).length >= written.length, 45_000, "the durable consumer");
  await sleep(500); // anything doubled would arrive by now
  const published = await streamIds(subjects);
  expect(published).toHaveLength(written.length);
  expect([...published].sort()).toEqual(want);
  expect([...(await applied(consumers.names.checkpoint))].sort()).toEqual(want);
  expect([...(await applied(consumers.names.durable))].sort()).toEqual(want);
  // The checkpointing consumer applies in stream order.
  expect(await applied(consumers.names.checkpoint)).toEqual(published);
}

async function newCase(kind: RelayKind) {
  const tag = `${run}_${++n}`;
  const subjects = subjectsFor(`ft${run}${n}`);
  await ensureStream(jsm, subjects);
  const source = await kind.prepare(tag);
  const consumers = await startConsumers(subjects, tag);
  /** A relay process: its own pool (through the proxy) and NATS connection. */
  async function relayProcess(wrap: (publisher: JsPublish) => JsPublish = (p) => p) {
    const pool = servicePool();
    const nc = await serviceNats(`relay-${tag}`);
    const publisher = new JetStreamPublisher(nc);
    /** What JetStream answered this process: acks, acks of a copy it dropped (same event id), failures. */
    const stats = { acks: 0, duplicates: 0, failures: 0 };
    const counted: JsPublish = {
      publish: (subject, data, options) =>
        publisher.publish(subject, data, options).then(
          (ack) => {
            stats.acks++;
            if (ack.duplicate) stats.duplicates++;
            return ack;
          },
          (err: unknown) => {
            stats.failures++;
            throw err;
          },
        ),
    };
    const relay = source.relay(pool, wrap(counted), subjects);
    relay.start();
    return {
      relay,
      stats,
      /** The process ends: no final flush (it died), connections gone. */
      async kill() {
        await relay.stop().catch(() => undefined);
        publisher.close();
        await nc.close().catch(() => undefined);
        await pool.end().catch(() => undefined);
      },
    };
  }
  return { tag, subjects, source, consumers, relayProcess };
}

/**
 * Events committed steadily before, during and after `outage` (it begins 100 ms into a
 * stretch of commits and is over when it returns): each one is in the stream once and
 * was applied once by each consumer.
 */
async function eachOnceThrough(c: Awaited<ReturnType<typeof newCase>>, relay: Relay, outage: () => Promise<void>): Promise<void> {
  const written = await writeSteadily(c.source.write, relay, 30);
  const writing = writeSteadily(c.source.write, relay, 60, 3, 25);
  await sleep(100);
  await outage();
  written.push(...(await writing));
  written.push(...(await writeSteadily(c.source.write, relay, 15)));
  await expectEachOnce(c.subjects, c.consumers, written);
}

/** Writes `count` events in commits of `per` spaced by `everyMs`, kicking the relay after each. */
async function writeSteadily(write: (n: number) => Promise<string[]>, relay: Relay | undefined, count: number, per = 3, everyMs = 20): Promise<string[]> {
  const ids: string[] = [];
  while (ids.length < count) {
    ids.push(...(await write(Math.min(per, count - ids.length))));
    relay?.kick();
    await sleep(everyMs);
  }
  return ids;
}

describe.each(kinds)("$name and the consumers", (kind) => {
  it("a restart in the middle of a batch: the relay dies after publishing part of a batch and before its commit, each consumer dies after applying a batch and before its commit", {
    timeout: 120_000,
  }, async () => {
    const c = await newCase(kind);
    try {
      const written = await c.source.write(60);
      // This relay process publishes 30 events (a batch and a half of 20), then its connections
      // to PostgreSQL drop and it dies in the middle of the second batch: 10 of its events are on
      // NATS, their rows not taken out of the outbox / the checkpoint not moved past them.
      let budget = 30;
      let cutAt: number | undefined;
      const dying = await c.relayProcess((publisher) => ({
        publish(subject, data, options) {
          if (budget-- > 0) return publisher.publish(subject, data, options);
          cutAt ??= Date.now();
          proxy.block();
          // Failing a moment later, so that the acks of the batch's first 10 have arrived.
          return sleep(300).then(() => Promise.reject(new Error("the relay process died")));
        },
      }));
      await waitFor(() => cutAt !== undefined, 20_000, "the relay to die");
      await dying.kill();
      await waitFor(async () => (await streamCount(c.subjects)) >= 30, 10_000, "the first 30 events");
      expect(await streamCount(c.subjects)).toBe(30);
      proxy.unblock();
      // The consumers die in the middle of their next batch (after the insert, before the commit).
      c.consumers.die.checkpoint = true;
      c.consumers.die.durable = true;
      const relay = await c.relayProcess();
      written.push(...(await writeSteadily(c.source.write, relay.relay, 30)));
      await waitFor(() => c.consumers.died.checkpoint && c.consumers.died.durable, 20_000, "the consumers to die");
      await c.consumers.restart();
      written.push(...(await writeSteadily(c.source.write, relay.relay, 15)));
      await expectEachOnce(c.subjects, c.consumers, written);
      // The 10 events published twice reached the stream once: JetStream dropped the copies (same event id).
      expect(relay.stats.duplicates).toBeGreaterThanOrEqual(10);
      await relay.kill();
    } finally {
      proxy.unblock();
      await c.consumers.stop();
    }
  });

  it("a NATS outage: nats-server killed (SIGKILL) while events are committed and relayed, started again on its store", { timeout: 120_000 }, async () => {
    const c = await newCase(kind);
    const relay = await c.relayProcess();
    try {
      // Down while the relay is in the middle of publishing: commits go on during the outage.
      await eachOnceThrough(c, relay.relay, async () => {
        await nats.kill();
        await sleep(1_500);
        await nats.start();
      });
      expect(relay.stats.failures).toBeGreaterThan(0); // the relay felt the outage
    } finally {
      await nats.start().catch(() => undefined);
      await relay.kill();
      await c.consumers.stop();
    }
  });

  it("a PostgreSQL restart: every backend of the relay and the consumers terminated and new connections refused for a while, while events are committed", {
    timeout: 120_000,
  }, async () => {
    const c = await newCase(kind);
    const relay = await c.relayProcess();
    try {
      // What the relay and the consumers see of a restart: their sessions ended by the server
      // (as a fast shutdown ends them), then refused connections, then a server that answers.
      await eachOnceThrough(c, relay.relay, async () => {
        const ended = await direct.query<{ pid: number }>(
          `WITH theirs AS MATERIALIZED (SELECT pid FROM pg_stat_activity WHERE datname = $1 AND client_port = ANY($2::int[]) AND pid <> pg_backend_pid())
         SELECT pid FROM theirs WHERE pg_terminate_backend(pid)`,
          [dbName, proxy.clientPorts],
        );
        proxy.block();
        expect(ended.rows.length).toBeGreaterThan(0);
        await sleep(1_500);
        proxy.unblock();
      });
    } finally {
      proxy.unblock();
      await relay.kill();
      await c.consumers.stop();
    }
  });
});
