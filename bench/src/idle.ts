// CPU that the stack spends per second with no request at all, and at a paced low rate:
// the work done per unit of time or per wake-up rather than per request (timers, polls,
// lingers, GC of an idle heap). Prints ms of CPU per second for every process.
//   pnpm --filter @gateway/bench idle
import { get } from "node:http";
import { connect } from "node:net";
import { checkHealth } from "@gateway/grpc-kit";
import { freePort, GRPC_SERVICES } from "@gateway/testkit";
import { sampleCpu, type CpuSample, type ProcessGroup } from "./cpu.js";
import { body } from "./compare.js";
import { PROCS, startGateway } from "./gateway.js";
import { perSecond, watchPostgres } from "./idle-why.js";
import { serverSettings, useOwnServers } from "./servers.js";
import { startMock } from "./targets.js";

if (process.argv.includes("--help") || process.argv.includes("-h")) {
  console.log(`Usage: pnpm --filter @gateway/bench idle

Starts the stack as the benchmark does, then measures the CPU of every process
(ms per second) and its wake-ups (voluntary context switches) while idle and while
paced at IDLE_RATES requests per second (default "0,10,50"; one connection, metered
JSON). Prints the figures, writes no file.
IDLE_SERVERS (default "own"): "own" starts PostgreSQL, NATS and Redis of the benchmark's
own on free ports, with the settings of docker-compose.yml (PostgreSQL's -c options,
NATS's and Redis's flags), so it measures the stack as deployed: every process of that
PostgreSQL is grouped by what it is (the services' backends, autovacuum workers, the
checkpointer, WAL writer ...) and the CPU of those that ended in a window is counted
from the postmaster's reaped time. "machine": the machine's shared servers (DATABASE_URL,
NATS_URL, REDIS_URL or the defaults), never reconfigured; their figures include
everyone else's work.
IDLE_PROBES (default "none"): "k8s" probes the stack from this process as the Kubernetes
manifests do, one replica each, a new connection each as the kubelet: every 5 s the edge's
/health and each gRPC service's /health/ready on its metrics port, every 20 s the edge's and
each service's /health/live. "k8s-grpc": as the manifests did before decision 0309, a gRPC
health Check on each service's plaintext health port every 5 s and a TCP connect to each
gRPC port every 10 s.
In every window it also prints which tables autovacuum and autoanalyze visited, the
rows and transactions of each service's database, and what pg_stat_activity showed
running, sampled every IDLE_SAMPLE_MS (default 250; 0: off).
Environment: IDLE_SECONDS (default 10), IDLE_RATES, BENCH_ENV, BENCH_APPS_ROOT, SERVICE_NODE_ARGS,
IDLE_SEED_RECORDS (default 0): before measuring, write that many settled usage records
(history, settled before the reconciler's checkpoint) and a tenth as many tenants with
ledger accounts, so that idle work that grows with the tables shows.
IDLE_BURST_SECONDS (default 10; 0: none): after the paced rates, a burst of metered JSON
at 32 connections for that long, then the stack's CPU in each IDLE_AFTER_BURST_STEP
seconds (default 5) of the IDLE_AFTER_BURST_SECONDS (default 30) after its last answer:
how fast the stack is back to idle (issue 36: at most 5 ms a second within 10 s).`);
  process.exit(0);
}

const seconds = Number(process.env.IDLE_SECONDS ?? 10);
const seedRecords = Number(process.env.IDLE_SEED_RECORDS ?? 0);
const rates = (process.env.IDLE_RATES ?? "0,10,50").split(",").map(Number);
const burstSeconds = Number(process.env.IDLE_BURST_SECONDS ?? 10);
const afterBurstStep = Number(process.env.IDLE_AFTER_BURST_STEP ?? 5);
const afterBurstSeconds = Number(process.env.IDLE_AFTER_BURST_SECONDS ?? 30);
const sampleMs = Number(process.env.IDLE_SAMPLE_MS ?? 250);
const serversMode = process.env.IDLE_SERVERS ?? "own";
const probes = process.env.IDLE_PROBES ?? "none";
if (probes !== "none" && probes !== "k8s" && probes !== "k8s-grpc") throw new Error(`IDLE_PROBES: "none", "k8s" or "k8s-grpc", not ${probes}`);
if (serversMode !== "own" && serversMode !== "machine") throw new Error(`IDLE_SERVERS: "own" or "machine", not ${serversMode}`);

// Every service, the edge's Redis and the test kit's clients use these servers (useOwnServers).
const own = serversMode === "own" ? await useOwnServers() : undefined;
if (own) console.log(`own servers (docker-compose.yml's settings): ${serverSettings(own)}`);
else console.log("the machine's shared PostgreSQL, NATS and Redis: their figures include everyone else's work");
const mock = await startMock("k");
// The plaintext health port of each gRPC service (GRPC_HEALTH_PORT), which the manifests' readiness probes call.
const healthPorts = new Map<string, number>();
if (probes === "k8s-grpc") for (const service of GRPC_SERVICES) healthPorts.set(service, await freePort());
// A stack that fails to start stops the servers above with it (they would outlive this process).
const gateway = await startGateway(
  mock.url,
  "k",
  {},
  Object.fromEntries([...healthPorts].map(([service, port]) => [service, { GRPC_HEALTH_PORT: String(port) }])),
).catch(async (err: unknown) => {
  await mock.stop();
  await own?.stop();
  throw err;
});
const url = `${gateway.url}/v1/apps/ai/bench/v1/chat/completions`;
const request = () =>
  fetch(url, { method: "POST", headers: { "x-api-key": gateway.key, "content-type": "application/json" }, body: body("json", "bench-small") }).then(
    async (r) => {
      await r.arrayBuffer();
      if (r.status !== 200) throw new Error(`status ${r.status}`);
    },
  );

const names = new Map<string, string>();
for (const service of ["ledger", "managed-ai", "jobs", "messaging", "files", "edge"] as const)
  names.set((await gateway.stack.sql<{ db: string }>(service, "SELECT current_database() AS db"))[0]!.db, service);
const pgWatch = await watchPostgres({
  serverUrl: own?.databaseUrl ?? process.env.DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres",
  databases: names,
  ...(own ? { postmaster: own.postmaster } : {}),
  sampleMs,
}).catch(async (err: unknown) => {
  await gateway.stop();
  await mock.stop();
  await own?.stop();
  throw err;
});
/** Every process of the stack: with own servers the cluster's processes by kind, NATS and Redis by pid. */
const groups = (): ProcessGroup[] =>
  own
    ? [
        ...gateway.groups().filter((g) => (PROCS as readonly string[]).includes(g.name)),
        ...pgWatch.groups(),
        { name: "nats", pids: () => [own.nats] },
        { name: "redis", pids: () => [own.redis] },
      ]
    : gateway.groups();
/** Which process is which, then a CPU sample. */
const sample = async (): Promise<CpuSample> => {
  if (own) await pgWatch.classify();
  else await gateway.snapshotBackends(); // backends that started during the window count from zero
  return sampleCpu(groups());
};
/** Not the stack's: the load generator and the benchmark's own connections. */
const stackOnly = (name: string) => name !== "load generator" && name !== "bench connections";

/**
 * One window: figures per process (ms of CPU and wake-ups per second), with the CPU of the
 * cluster's processes that ended in it, and what PostgreSQL did.
 */
async function measure(during: () => Promise<void>) {
  const window = await pgWatch.begin();
  const before = await sample();
  const started = Date.now();
  await during();
  const after = await sample();
  const ms = Date.now() - started;
  const why = await window.end(after, before);
  const figures = perSecond(before, after, ms).filter(([n]) => stackOnly(n));
  if (own) figures.push(["postgres (ended processes)", (why.endedCpu * 1000 * 1000) / ms, 0]);
  const total = figures.reduce((s, [, v]) => s + v, 0);
  const wakeups = figures.reduce((s, [, , w]) => s + w, 0);
  const sum = (prefix: string) => figures.filter(([n]) => n.startsWith(prefix)).reduce((s, [, v]) => s + v, 0);
  const node = figures.filter(([n]) => !/^(postgres|nats|redis)/.test(n)).reduce((s, [, v]) => s + v, 0);
  const nodeWakeups = figures.filter(([n]) => !/^(postgres|nats|redis)/.test(n)).reduce((s, [, , w]) => s + w, 0);
  return { ms, figures, total, wakeups, node, nodeWakeups, sum, why: why.lines };
}

/** An HTTP GET on a connection of its own, as the kubelet makes it. */
const probeGet = (url: string) =>
  new Promise<void>((resolve) => {
    get(url, { agent: false }, (res) => {
      res.resume();
      res.on("end", resolve);
    }).on("error", () => resolve());
  });
/** A TCP connect and close (a `tcpSocket` liveness probe). */
const probeTcp = (address: string) =>
  new Promise<void>((resolve) => {
    const [host, port] = address.split(":");
    const socket = connect(Number(port), host!, () => {
      socket.destroy();
      resolve();
    });
    socket.on("error", () => resolve());
  });
/** A gRPC service's probe path on its metrics port. */
const metricsProbe = (service: (typeof GRPC_SERVICES)[number], path: string) => gateway.stack.metricsUrl(service).replace(/\/metrics$/, path);
/** The manifests' probes, one replica each (deploy/base/*.yaml): readiness every 5 s, liveness every 20 s (10 s before 0309). */
function startProbes(): () => void {
  const readiness = setInterval(() => {
    void probeGet(`${gateway.url}/health`);
    if (probes === "k8s-grpc") for (const port of healthPorts.values()) void checkHealth(`127.0.0.1:${port}`, "", 1_000).catch(() => "");
    else for (const service of GRPC_SERVICES) void probeGet(metricsProbe(service, "/health/ready"));
  }, 5_000);
  const liveness = setInterval(
    () => {
      void probeGet(`${gateway.url}/health/live`);
      if (probes === "k8s-grpc") for (const service of GRPC_SERVICES) void probeTcp(gateway.stack.address(service));
      else for (const service of GRPC_SERVICES) void probeGet(metricsProbe(service, "/health/live"));
    },
    probes === "k8s-grpc" ? 10_000 : 20_000,
  );
  return () => {
    clearInterval(readiness);
    clearInterval(liveness);
  };
}
let stopProbes: (() => void) | undefined;

try {
  for (let i = 0; i < 50; i++) await request(); // warm up every path once
  if (probes !== "none") {
    stopProbes = startProbes();
    console.log(
      `probing as the Kubernetes manifests do${probes === "k8s-grpc" ? " before decision 0309 (gRPC health, TCP)" : ""}: readiness every 5 s, liveness every ${probes === "k8s-grpc" ? 10 : 20} s`,
    );
  }
  if (seedRecords > 0) {
    const tenants = Math.max(1, Math.floor(seedRecords / 10));
    const [template] = await gateway.stack.sql<Record<string, unknown>>("managed-ai", "SELECT * FROM usage_records WHERE status = 'completed' LIMIT 1");
    if (!template) throw new Error("no completed record to copy");
    await gateway.stack.sql("edge", "INSERT INTO tenants (id, name) SELECT 'ten_seed' || g, 'seed ' || g FROM generate_series(1, $1::int) g", [tenants]);
    await gateway.stack.sql("ledger", "INSERT INTO accounts (tenant_id) SELECT 'ten_seed' || g FROM generate_series(1, $1::int) g", [tenants]);
    await gateway.stack.sql(
      "managed-ai",
      `INSERT INTO usage_records (id, tenant_id, api_key_id, service_alias, model_alias, price_id, upstream_id, discount_bps, status, stream,
         input_tokens_bound, output_tokens_cap, reserved_units, final_units, usage_json, hold_id, hold_expires_at, settled_at, refunded_units, created_at, updated_at)
       SELECT 'req_seed' || g, 'ten_seed' || (1 + g % $2::int), $3, $4, $5, $6, $7, 0, 'completed', false, 100, 100, 10, 7, '{}', 'hold_seed' || g,
              timestamp '2020-01-01', timestamp '2020-01-01', 3, timestamp '2020-01-01', timestamp '2020-01-01'
       FROM generate_series(1, $1::int) g`,
      [seedRecords, tenants, template.api_key_id, template.service_alias, template.model_alias, template.price_id, template.upstream_id],
    );
    for (const service of ["edge", "ledger", "managed-ai"] as const) await gateway.stack.sql(service, "ANALYZE");
    console.log(`seeded ${seedRecords} usage records and ${tenants} tenants`);
  }
  for (const rate of rates) {
    await new Promise((r) => setTimeout(r, 2_000));
    let sent = 0;
    const m = await measure(async () => {
      const started = Date.now();
      while (Date.now() - started < seconds * 1000) {
        if (rate > 0) {
          await request();
          sent++;
          const due = started + (sent * 1000) / rate;
          if (due > Date.now()) await new Promise((r) => setTimeout(r, due - Date.now()));
        } else await new Promise((r) => setTimeout(r, seconds * 1000 - (Date.now() - started)));
      }
    });
    const perRequest = sent > 0 ? `, ${(m.total / (sent / (m.ms / 1000))).toFixed(2)} ms per request` : "";
    console.log(
      `${rate} req/s (${sent} sent), ${(m.ms / 1000).toFixed(0)} s: whole stack ${m.total.toFixed(1)} ms CPU per second${perRequest}` +
        ` (Node ${m.node.toFixed(1)}, PostgreSQL ${m.sum("postgres").toFixed(1)}, NATS ${m.sum("nats").toFixed(1)}, Redis ${m.sum("redis").toFixed(1)}; ` +
        `${m.wakeups.toFixed(1)} wake-ups per second, of them Node ${m.nodeWakeups.toFixed(1)})\n` +
        `    ms/s: ${m.figures.map(([n, v]) => `${n} ${v.toFixed(2)}`).join(" · ")}\n` +
        `    wake-ups/s: ${m.figures.map(([n, , w]) => `${n} ${w.toFixed(1)}`).join(" · ")}\n` +
        m.why.map((l) => `    ${l}`).join("\n"),
    );
  }
  if (burstSeconds > 0) {
    const end = Date.now() + burstSeconds * 1000;
    let sent = 0;
    const client = async () => {
      while (Date.now() < end) {
        await request();
        sent++;
      }
    };
    await Promise.all(Array.from({ length: 32 }, client));
    console.log(`burst: ${sent} requests at 32 connections in ${burstSeconds} s; the stack after its last answer:`);
    for (let t = afterBurstStep; t <= afterBurstSeconds; t += afterBurstStep) {
      const m = await measure(() => new Promise((r) => setTimeout(r, afterBurstStep * 1000)));
      const top = [...m.figures].sort((a, b) => b[1] - a[1]).slice(0, 7);
      console.log(
        `  ${t - afterBurstStep}–${t} s: whole stack ${m.total.toFixed(1)} ms CPU per second, ${m.wakeups.toFixed(0)} wake-ups per second (Node ${m.nodeWakeups.toFixed(1)}); ` +
          `most: ${top.map(([n, v, w]) => `${n} ${v.toFixed(2)} (${w.toFixed(1)} wake-ups/s)`).join(" · ")}\n` +
          m.why.map((l) => `      ${l}`).join("\n"),
      );
    }
  }
} finally {
  stopProbes?.();
  await pgWatch.close();
  await gateway.stop();
  await mock.stop();
  await own?.stop();
}
