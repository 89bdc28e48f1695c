// Reserve + capture pairs against a real ledger process over gRPC: one reserve, then
// one capture of part of the hold, per pair.
//
//   pnpm --filter @gateway/ledger bench [-- --seconds 10 --levels 1,8,32,64 --tenants 256 --pool 10 --client pipelined|single --profile <dir> --entry <main.js>]
//
// --client pipelined (the default) calls the ledger as managed-ai does: a movement is
// sent at once when no call is under way, and movements that arrive meanwhile go
// together as one ApplyBatch (@gateway/ledger-client's LedgerCalls, as managed-ai uses it); single makes one Reserve
// and one Capture call per pair.
// --tenants 1 puts every pair on one tenant (one hot account row); --profile writes
// a V8 CPU profile of the ledger process into <dir> (bench/cpu-profile.mjs); --entry
// runs another build of the ledger (for before/after comparisons).
// Spawns `node dist/main.js` (build first) on a fresh database (gw_bench_ledger_<run>)
// and its own NATS namespace, so the outbox relay publishes every event as in
// production; drops both afterwards. Prints a table and the machine it ran on.
import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { dropDatabase, databaseUrl, GroupCommit } from "@gateway/db-kit";
import { subjectsFor } from "@gateway/events";
import { connectNats } from "@gateway/events-runtime";
import { checkHealth, createClient } from "@gateway/grpc-kit";
import { ledgerV1 } from "@gateway/protos";
import { freePort, ServiceProcess, testCerts } from "@gateway/testkit";
import { createDatabase } from "../dist/db.js";

const { values: args } = parseArgs({
  args: process.argv.slice(2).filter((a) => a !== "--"),
  options: {
    seconds: { type: "string", default: "10" },
    warmup: { type: "string", default: "2" },
    levels: { type: "string", default: "1,8,32,64" },
    tenants: { type: "string", default: "256" },
    pool: { type: "string", default: "10" },
    profile: { type: "string" },
    entry: { type: "string" },
    client: { type: "string", default: "pipelined" },
  },
});
const seconds = Number(args.seconds);
const warmup = Number(args.warmup);
const levels = args.levels.split(",").map(Number);
const tenantCount = Number(args.tenants);

const serverUrl = process.env.DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
const natsUrl = process.env.NATS_URL ?? "nats://127.0.0.1:4222";
const run = randomBytes(4).toString("hex");
const dbName = `gw_bench_ledger_${run}`;
const namespace = `bench${run}`;
const port = await freePort();
const address = `127.0.0.1:${port}`;

const entry = args.entry ?? fileURLToPath(new URL("../dist/main.js", import.meta.url));
// Production refuses the development service token (decision 0183): this run makes its own.
const serviceToken = randomBytes(32).toString("hex");
// Production refuses plaintext gRPC too (decision 0230): the test kit's CA and certificates.
const certs = testCerts();
const tls = certs.tls("edge");
const ledger = new ServiceProcess("ledger", entry, {
  PATH: process.env.PATH ?? "",
  NODE_ENV: "production",
  LOG_LEVEL: "warn",
  DATABASE_URL: serverUrl,
  DATABASE_NAME: dbName,
  DATABASE_POOL_SIZE: args.pool,
  GRPC_PORT: String(port),
  METRICS_PORT: "0",
  NATS_URL: natsUrl,
  NATS_NAMESPACE: namespace,
  SERVICE_TOKEN: serviceToken,
  ...certs.env("ledger"),
  ...(args.profile ? { NODE_OPTIONS: `--import=${fileURLToPath(new URL("./cpu-profile.mjs", import.meta.url))}`, LEDGER_PROFILE_DIR: args.profile } : {}),
});

const client = createClient(ledgerV1, address, { deadlineMs: 30_000, serviceToken, tls });
if (!["pipelined", "single"].includes(args.client)) throw new Error("--client is pipelined or single");
// As @gateway/ledger-client's LedgerCalls: one ApplyBatch call under way at a time, up to 200 movements each.
const batches = new GroupCommit({
  maxBatch: 200,
  concurrency: 1,
  isolateFailures: false,
  run: async (items) => (await client.ApplyBatch({ items })).results,
});
async function movement(kind, request) {
  if (args.client === "single") return kind === "reserve" ? client.Reserve(request) : client.Capture(request);
  const result = await batches.submit({ [kind]: request });
  if (result.error) throw Object.assign(new Error(result.error.message), { code: result.error.code });
  return kind === "reserve" ? result.reserved : result.captured;
}
const { prisma } = createDatabase(databaseUrl(serverUrl, dbName), 2);
let sequence = 0;

const TICKS_PER_SECOND = 100; // USER_HZ on Linux

/** CPU seconds (user + system) a process has used so far, from /proc; 0 where unavailable. */
function cpuSeconds(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
  } catch {
    return 0;
  }
}

/** The local nats-server's pid (the machine's NATS runs here), or 0. */
function natsPid() {
  try {
    for (const entry of readdirSync("/proc")) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        if (readFileSync(`/proc/${entry}/comm`, "utf8").trim() === "nats-server") return Number(entry);
      } catch {
        // the process ended meanwhile
      }
    }
  } catch {
    // no /proc
  }
  return 0;
}

/** CPU seconds of the ledger process, its PostgreSQL backends, NATS and this client. */
async function cpuSnapshot() {
  const backends = await prisma.$queryRawUnsafe("SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()");
  const nats = natsPid();
  const self = process.cpuUsage();
  await prisma.$queryRawUnsafe("SELECT pg_stat_clear_snapshot()::text AS x");
  const [stats] = await prisma.$queryRawUnsafe("SELECT xact_commit::int AS commits FROM pg_stat_database WHERE datname = current_database()");
  // Row changes (inserts, updates, deletes) in every table of the ledger's database:
  // what the WAL, the indexes and vacuum pay for. Flushed by the backends with a delay.
  const [rows] = await prisma.$queryRawUnsafe("SELECT coalesce(sum(n_tup_ins + n_tup_upd + n_tup_del), 0)::bigint AS changes FROM pg_stat_user_tables");
  return {
    commits: stats.commits,
    rowChanges: Number(rows.changes),
    ledger: cpuSeconds(ledger.pid),
    postgres: backends.reduce((sum, b) => sum + cpuSeconds(b.pid), 0),
    nats: nats ? cpuSeconds(nats) : 0,
    client: (self.user + self.system) / 1e6,
  };
}

function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/** One worker: reserve then capture, back to back, until the deadline. */
async function worker(tenant, until, latencies, counters) {
  while (Date.now() < until) {
    const n = ++sequence;
    const started = process.hrtime.bigint();
    try {
      const hold = await movement("reserve", { operation_id: `b:${run}:r:${n}`, tenant_id: tenant, units: "100", ttl_seconds: 900 });
      await movement("capture", { operation_id: `b:${run}:c:${n}`, hold_id: hold.hold_id, units: "61" });
      latencies.push(Number(process.hrtime.bigint() - started) / 1e6);
    } catch (err) {
      counters.errors++;
      if (counters.errors <= 3) console.error(`pair failed: ${err.code ?? ""} ${err.message}`);
    }
  }
}

/** Events not yet published: outbox rows, or journal rows after the relay's checkpoint (tailing mode). */
async function eventBacklog() {
  const [outbox] = await prisma.$queryRawUnsafe("SELECT count(*)::int AS n FROM outbox_events");
  const [tail] = await prisma
    .$queryRawUnsafe(
      `SELECT CASE WHEN to_regclass('relay_checkpoints') IS NULL THEN 0
       ELSE (SELECT count(*)::int FROM transfers WHERE seq > coalesce((SELECT max(position) FROM relay_checkpoints), 0)) END AS n`,
    )
    .catch(() => [{ n: 0 }]);
  return { n: outbox.n + tail.n };
}

async function level(concurrency) {
  const tenantsOf = (i) => `bench-t${i % tenantCount}`;
  if (warmup > 0) await Promise.all(Array.from({ length: concurrency }, (_, i) => worker(tenantsOf(i), Date.now() + warmup * 1000, [], { errors: 0 })));
  const latencies = [];
  const counters = { errors: 0 };
  const cpuBefore = await cpuSnapshot();
  const started = Date.now();
  await Promise.all(Array.from({ length: concurrency }, (_, i) => worker(tenantsOf(i), started + seconds * 1000, latencies, counters)));
  const elapsed = (Date.now() - started) / 1000;
  const cpuAfter = await cpuSnapshot();
  const cpuMs = (k) => ((cpuAfter[k] - cpuBefore[k]) * 1000) / Math.max(1, latencies.length);
  latencies.sort((a, b) => a - b);
  const backlog = await eventBacklog();
  return {
    concurrency,
    pairs: latencies.length,
    perSecond: latencies.length / elapsed,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    errors: counters.errors,
    outboxBacklog: backlog.n,
    commitsPerPair: (cpuAfter.commits - cpuBefore.commits) / Math.max(1, latencies.length),
    rowsPerPair: (cpuAfter.rowChanges - cpuBefore.rowChanges) / Math.max(1, latencies.length),
    cpu: `${cpuMs("ledger").toFixed(2)} / ${cpuMs("postgres").toFixed(2)} / ${cpuMs("nats").toFixed(2)} / ${cpuMs("client").toFixed(2)}`,
  };
}

async function main() {
  ledger.start();
  const until = Date.now() + 60_000;
  while ((await checkHealth(address, ledgerV1.serviceName, 500, tls).catch(() => "")) !== "SERVING") {
    if (!ledger.running || Date.now() > until) throw new Error(`ledger did not start:\n${ledger.tail()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  for (let i = 0; i < tenantCount; i++) {
    await client.Credit({ operation_id: `b:${run}:fund:${i}`, tenant_id: `bench-t${i}`, units: "1000000000000", reason: "benchmark funds" });
  }
  const [pgVersion] = await prisma.$queryRawUnsafe("SELECT current_setting('server_version') AS v, current_setting('synchronous_commit') AS sc");
  console.log(
    `machine: ${cpus().length} cores (${cpus()[0]?.model ?? "?"}), load ${loadavg()
      .map((l) => l.toFixed(2))
      .join(" ")}, ` + `Node ${process.version}, PostgreSQL ${pgVersion.v} (synchronous_commit=${pgVersion.sc})`,
  );
  console.log(`ledger pool ${args.pool}, ${tenantCount} tenants, ${args.client} client, ${seconds} s per level after ${warmup} s warm-up\n`);
  console.log(
    "| concurrency | pairs | pairs/s | p50 ms | p99 ms | errors | outbox backlog | commits per pair | row changes per pair | CPU ms per pair: ledger / postgres / nats / client |",
  );
  console.log("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
  for (const c of levels) {
    const r = await level(c);
    console.log(
      `| ${r.concurrency} | ${r.pairs} | ${r.perSecond.toFixed(0)} | ${r.p50.toFixed(2)} | ${r.p99.toFixed(2)} | ${r.errors} | ${r.outboxBacklog} | ${r.commitsPerPair.toFixed(2)} | ${r.rowsPerPair.toFixed(2)} | ${r.cpu} |`,
    );
  }
  const check = await client.CheckInvariant({ all_tenants: true });
  console.log(`\ninvariant after the run: ${check.ok ? "ok" : "VIOLATED"} (journal sum ${check.journal_sum}, ${check.tenants.length} tenants)`);
  if (!check.ok) process.exitCode = 1;
}

try {
  await main();
} finally {
  client.close();
  await prisma.$disconnect();
  await ledger.stop();
  ledger.close();
  const nc = await connectNats(natsUrl, "ledger-bench");
  await (await nc.jetstreamManager()).streams.delete(subjectsFor(namespace).stream).catch(() => undefined);
  await nc.drain();
  await dropDatabase(serverUrl, dbName);
}
