// The delay from an event's commit to its arrival on NATS through one outbox relay, as the
// services run it: `pgTransactions` without a synchronous commit, the `JetStreamPublisher`, the
// defaults of OUTBOX_POLL_MS (500), OUTBOX_POLL_MAX_MS (10 000), OUTBOX_LINGER_MS (20) and
// OUTBOX_LINGER_MAX_MS (100; MAX_LINGER_MS=20 for a fixed linger), and a
// kick after each commit as `createTransact` gives one. One event per commit, commits at a fixed
// rate (open loop); the delay runs from the moment the commit returned to the writer to the
// moment a plain subscriber of the stream's subjects received the event (the relay's publish,
// as JetStream stores it). A last run commits without kicks: events of another process, found
// by the relay's polls only. Prints p50 / p90 / p99 / max per run. A measurement, not a test;
// it creates (and drops) a database of its own and a stream of its own.
// RELAY=transaction measures the log relay of rows positioned by their transaction's id (the
// usage records' events, docs/decisions/0205) instead: rows of a table, tailed below the horizon.
//   pnpm --filter @gateway/events-runtime build && node packages/events-runtime/bench/relay-latency.mjs [lowRate] [highRate] [seconds]
//   RELAY=transaction node packages/events/bench/relay-latency.mjs [lowRate] [highRate] [seconds]
import { randomBytes } from "node:crypto";
import { createPool, databaseUrl, dropDatabase, ensureDatabase } from "@gateway/db-kit";
import { createLogger } from "@gateway/logger";
import { subjectsFor } from "@gateway/events";
import { connectNats, ensureStream, JetStreamPublisher, outboxTable, pgTransactions, Relay, tailedLog } from "../dist/index.js";

const lowRate = Number(process.argv[2] ?? 10);
const highRate = Number(process.argv[3] ?? 300);
const seconds = Number(process.argv[4] ?? 10);
const SERVER = process.env.DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
const NATS = process.env.NATS_URL ?? "nats://127.0.0.1:4222";
const tag = randomBytes(3).toString("hex");
const dbName = `gw_bench_relay_${tag}`;

await ensureDatabase(SERVER, dbName);
const pool = createPool(databaseUrl(SERVER, dbName), { poolSize: 10 });
await pool.query(`CREATE TABLE outbox_events (seq BIGSERIAL PRIMARY KEY, id TEXT NOT NULL UNIQUE, type TEXT NOT NULL, payload JSONB NOT NULL,
  request_id TEXT, created_at TIMESTAMPTZ(3) NOT NULL DEFAULT now())`);
const nc = await connectNats(NATS, "relay-latency");
const jsm = await nc.jetstreamManager();
const subjects = subjectsFor(`rl${tag}`);
await ensureStream(jsm, subjects);
const publisher = new JetStreamPublisher(nc);
const logger = createLogger({ service: "relay-latency", level: "warn" });
const byTransaction = process.env.RELAY === "transaction";
if (byTransaction)
  await pool.query(`CREATE TABLE rows (id TEXT PRIMARY KEY, seq BIGINT NOT NULL DEFAULT pg_current_xact_id()::text::bigint, payload JSONB NOT NULL,
      created_at TIMESTAMPTZ(3) NOT NULL DEFAULT now());
    CREATE INDEX ON rows (seq);
    CREATE VIEW rows_events AS SELECT seq, id, 'ledger.credited'::text AS type, payload, NULL::text AS request_id, created_at FROM rows;
    CREATE TABLE relay_checkpoints (name TEXT PRIMARY KEY, position BIGINT NOT NULL, updated_at TIMESTAMPTZ(3) NOT NULL DEFAULT now())`);
const timing = { source: "bench", logger, pollMs: 500, maxPollMs: 10_000, lingerMs: 20, maxLingerMs: Number(process.env.MAX_LINGER_MS ?? 100) };
// The relay's own connections, counted: one per round (its cost is per round, not per event).
const relayPool = createPool(databaseUrl(SERVER, dbName), { poolSize: 2 });
let rounds = 0;
const counted = {
  connect: () => {
    rounds++;
    return relayPool.connect();
  },
};
const relay = byTransaction
  ? new Relay({ ...timing, from: tailedLog({ pool: counted, log: "rows_events", checkpoint: "rows", order: "transaction" }), js: publisher, subjects })
  : new Relay({ ...timing, from: outboxTable({ runTx: pgTransactions(counted, { synchronousCommit: false }) }), js: publisher, subjects });
const insert = byTransaction
  ? "INSERT INTO rows (id, payload) VALUES ($1, $2::jsonb)"
  : "INSERT INTO outbox_events (id, type, payload) VALUES ($1, 'ledger.credited', $2::jsonb)";
relay.start();

// The subscriber on a connection of its own, as a consumer in another process would be.
const arrivals = new Map();
const sub = await connectNats(NATS, "relay-latency-subscriber");
sub.subscribe(subjects.all, { callback: (_err, msg) => arrivals.set(msg.headers?.get("Nats-Msg-Id"), performance.now()) });
await sub.flush();

const payload = JSON.stringify({ tenant_id: "ten_1", entry_id: "ent_1", operation_id: "op_1", units: "1", available_units: "1", reason: "bench" });
let n = 0;

async function measure(label, rate, kick) {
  const commits = new Map();
  const writes = [];
  const roundsBefore = rounds;
  const count = Math.round(rate * seconds);
  const started = performance.now();
  for (let i = 0; i < count; i++) {
    const due = started + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    const id = `evt_bench_${++n}`;
    writes.push(
      pool.query(insert, [id, payload]).then(() => {
        commits.set(id, performance.now());
        if (kick) relay.kick();
      }),
    );
  }
  await Promise.all(writes);
  const until = Date.now() + 30_000;
  while ([...commits.keys()].some((id) => !arrivals.has(id)) && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
  const delays = [...commits]
    .filter(([id]) => arrivals.has(id))
    .map(([id, at]) => arrivals.get(id) - at)
    .sort((a, b) => a - b);
  const pct = (p) => delays[Math.min(delays.length - 1, Math.ceil((p / 100) * delays.length) - 1)];
  const f = (ms) => ms.toFixed(1).padStart(7);
  const achieved = (count / (performance.now() - started)) * 1000;
  console.log(
    `${label.padEnd(34)} ${String(rate).padStart(4)}/s (${achieved.toFixed(0)}/s done) ${String(delays.length).padStart(5)}/${count} arrived   p50 ${f(pct(50))}  p90 ${f(pct(90))}  p99 ${f(pct(99))}  max ${f(delays[delays.length - 1])} ms   ${((rounds - roundsBefore) / count).toFixed(2)} rounds/event`,
  );
}

console.log(
  `commit → arrival on NATS, one ${byTransaction ? "log relay by transaction id" : "outbox relay"} (linger 20 ms growing to ${timing.maxLingerMs} ms as the rate falls, poll 500 ms doubling to 10 s while idle), ${seconds} s per run`,
);
await measure("low rate, kicked (own commits)", lowRate, true);
await measure("high rate, kicked (own commits)", highRate, true);
await measure("low rate, not kicked (polls only)", lowRate, false);

await relay.stop();
publisher.close();
await sub.drain();
await jsm.streams.delete(subjects.stream).catch(() => undefined);
await nc.drain();
await pool.end();
await relayPool.end();
await dropDatabase(SERVER, dbName);
