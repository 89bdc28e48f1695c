// The relay's CPU per event, in the relay's own process: events committed beforehand, then
// published by `flush()` (rounds of a full batch, as under load), for each source: the outbox
// table, a log in commit order, a log positioned by transaction id (docs/decisions/0205).
// Measures this process's CPU (user + system, `process.cpuUsage`) across the flush, divided
// by the events published; the writes are not counted. Runs of two builds interleave
// (A B B A ...) when given two dist directories, so the machine's load falls on both alike.
// A measurement, not a test; it creates (and drops) a database and a stream of its own.
//   pnpm --filter @gateway/events-runtime build && node packages/events-runtime/bench/relay-cost.mjs [events] [rounds] [distA] [distB]
import { randomBytes } from "node:crypto";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { createPool, databaseUrl, dropDatabase, ensureDatabase } from "@gateway/db-kit";
import { subjectsFor } from "@gateway/events";
import { createLogger } from "@gateway/logger";

const events = Number(process.argv[2] ?? 20_000);
const rounds = Number(process.argv[3] ?? 2);
const dists = process.argv.slice(4).length > 0 ? process.argv.slice(4) : [new URL("../dist", import.meta.url).pathname];
const builds = await Promise.all(dists.map(async (d) => ({ dir: d, kit: await import(pathToFileURL(resolve(d, "index.js")).href) })));
const SERVER = process.env.DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
const NATS = process.env.NATS_URL ?? "nats://127.0.0.1:4222";
const tag = randomBytes(3).toString("hex");
const dbName = `gw_bench_relaycost_${tag}`;

await ensureDatabase(SERVER, dbName);
const pool = createPool(databaseUrl(SERVER, dbName), { poolSize: 4 });
await pool.query(`CREATE TABLE outbox_events (seq BIGSERIAL PRIMARY KEY, id TEXT NOT NULL UNIQUE, type TEXT NOT NULL, payload JSONB NOT NULL,
    request_id TEXT, created_at TIMESTAMPTZ(3) NOT NULL DEFAULT now());
  CREATE TABLE rows (seq BIGINT NOT NULL, id TEXT PRIMARY KEY, payload JSONB NOT NULL, created_at TIMESTAMPTZ(3) NOT NULL DEFAULT now());
  CREATE INDEX ON rows (seq);
  CREATE SEQUENCE rows_seq;
  CREATE VIEW rows_events AS SELECT seq, id, 'ledger.credited'::text AS type, payload, NULL::text AS request_id, created_at FROM rows;
  CREATE TABLE txrows (id TEXT PRIMARY KEY, seq BIGINT NOT NULL DEFAULT pg_current_xact_id()::text::bigint, payload JSONB NOT NULL,
    created_at TIMESTAMPTZ(3) NOT NULL DEFAULT now());
  CREATE INDEX ON txrows (seq);
  CREATE VIEW txrows_events AS SELECT seq, id, 'ledger.credited'::text AS type, payload, NULL::text AS request_id, created_at FROM txrows;
  CREATE TABLE relay_checkpoints (name TEXT PRIMARY KEY, position BIGINT NOT NULL, updated_at TIMESTAMPTZ(3) NOT NULL DEFAULT now())`);
const logger = createLogger({ service: "relay-cost", level: "warn" });
const payload = JSON.stringify({ tenant_id: "ten_1", entry_id: "ent_1", operation_id: "op_1", units: "1", available_units: "1", reason: "bench" });

/** A relay of the build's API: `Relay` with a source, or the former `OutboxRelay` / `LogRelay`. */
function relayOf(kit, kind, common, pool) {
  const log =
    kind === "outbox" ? undefined : { log: `${kind}_events`, checkpoint: `${kind}_${common.tag}`, order: kind === "txrows" ? "transaction" : "commit" };
  if (kit.Relay) {
    const from = kind === "outbox" ? kit.outboxTable({ runTx: kit.pgTransactions(pool, { synchronousCommit: false }) }) : kit.tailedLog({ pool, ...log });
    return new kit.Relay({ ...common.options, from });
  }
  return kind === "outbox"
    ? new kit.OutboxRelay({ ...common.options, runTx: kit.pgTransactions(pool, { synchronousCommit: false }) })
    : new kit.LogRelay({ ...common.options, pool, ...log });
}

let n = 0;
async function fill(kind) {
  const ids = Array.from({ length: events }, () => `evt_cost_${++n}`);
  if (kind === "outbox")
    await pool.query("INSERT INTO outbox_events (id, type, payload) SELECT unnest($1::text[]), 'ledger.credited', $2::jsonb", [ids, payload]);
  else if (kind === "rows") await pool.query("INSERT INTO rows (seq, id, payload) SELECT nextval('rows_seq'), unnest($1::text[]), $2::jsonb", [ids, payload]);
  // One transaction per 100 rows: the log by transaction id is read whole transactions at a time.
  else
    for (let i = 0; i < ids.length; i += 100)
      await pool.query("INSERT INTO txrows (id, payload) SELECT unnest($1::text[]), $2::jsonb", [ids.slice(i, i + 100), payload]);
  await pool.query("ANALYZE");
}

const results = new Map();
const nc = await builds[0].kit.connectNats(NATS, "relay-cost");
const jsm = await nc.jetstreamManager();
const subjects = subjectsFor(`rc${tag}`);
await builds[0].kit.ensureStream(jsm, subjects);
const order = [];
for (let r = 0; r < rounds; r++) order.push(...(r % 2 === 0 ? builds : [...builds].reverse()));
for (const kind of ["outbox", "rows", "txrows"]) {
  for (const [i, build] of order.entries()) {
    const publisher = new build.kit.JetStreamPublisher(nc);
    // A pool per run: each build prepares its statements on connections of its own.
    const relayPool = createPool(databaseUrl(SERVER, dbName), { poolSize: 2 });
    const relay = relayOf(
      build.kit,
      kind,
      {
        tag: `${i}`,
        options: { js: publisher, subjects, source: "bench", logger, pollMs: 60_000, batchSize: kind === "outbox" ? 100 : 500 },
      },
      relayPool,
    );
    // Each run's checkpoint starts after the rows of the runs before it.
    if (kind !== "outbox") await pool.query(`INSERT INTO relay_checkpoints (name, position) SELECT $1, coalesce(max(seq), 0) FROM ${kind}`, [`${kind}_${i}`]);
    await fill(kind);
    const before = process.cpuUsage();
    const wall = performance.now();
    const published = await relay.flush();
    const cpu = process.cpuUsage(before);
    const ms = performance.now() - wall;
    await relay.stop();
    await relayPool.end();
    publisher.close();
    const us = (cpu.user + cpu.system) / published;
    const key = `${kind} ${build.dir}`;
    results.set(key, [...(results.get(key) ?? []), us]);
    console.log(
      `${kind.padEnd(7)} ${build.dir.padEnd(40)} ${String(published).padStart(6)} events  ${us.toFixed(1).padStart(6)} µs CPU/event  ${((ms / published) * 1000).toFixed(1).padStart(6)} µs wall/event`,
    );
  }
}
console.log("\nmedian µs CPU per event");
for (const [key, values] of results) {
  const sorted = [...values].sort((a, b) => a - b);
  console.log(`${key.padEnd(50)} ${sorted[Math.floor(sorted.length / 2)].toFixed(1)}   (${values.map((v) => v.toFixed(1)).join(", ")})`);
}

await jsm.streams.delete(subjects.stream).catch(() => undefined);
await nc.drain();
await pool.end();
await dropDatabase(SERVER, dbName);
