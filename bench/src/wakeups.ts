// Wake-ups and messages per metered request, for every process of the stack, at each
// number of connections given (issue 36, item 3). Counts, not milliseconds: they do not
// depend on how loaded the machine is.
//
// - wake-ups: voluntary context switches of every thread (`/proc/<pid>/task/<tid>/status`):
//   each time a thread went to sleep (epoll_wait, a futex, a read with nothing to read) and
//   was woken again. Preemptions (nonvoluntary switches) are printed apart: they grow with load.
// - messages: read and write system calls of every thread (`/proc/<pid>/task/<tid>/io`,
//   syscr and syscw): read, readv, pread, write, writev, pwrite. Node, NATS and Redis
//   use these on their sockets; PostgreSQL's backends use recv/send on theirs, which these
//   counters do not see (theirs are file reads and writes: WAL, data files), so the messages
//   of a PostgreSQL round trip are counted on the client's side. `--strace` gives every
//   system call by name instead (strace -f -c on every process; it slows them several times,
//   and timings change how much batches carry, so it is a breakdown, not the figure).
//
// PostgreSQL, NATS and Redis are started for this run alone, as docker-compose.yml configures
// them (`servers.ts`, shared with the idle benchmark), so their
// processes do only this stack's work; `--shared` uses the machine's instead (their rows then
// include everyone else's traffic and are left out of the total).
//
// Usage:
//   pnpm --filter @gateway/bench exec tsx src/wakeups.ts [requests] [json|stream] [connections,...] [--shared] [--strace] [--threads]
//   e.g. tsx src/wakeups.ts 2000 json 1,32
// Environment: BENCH_ENV, SERVICE_NODE_ARGS, BENCH_APPS_ROOT, BENCH_LOG_LEVEL (as the other benchmarks).
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { body } from "./compare.js";
import { pidsOf } from "./cpu.js";
import { PROCS, startGateway } from "./gateway.js";
import { load } from "./load.js";
import { childrenOf as children, useOwnServers } from "./servers.js";
import { startMock } from "./targets.js";

if (process.argv.includes("--help") || process.argv.includes("-h")) {
  console.log(`Usage: pnpm --filter @gateway/bench wakeups [requests] [json|stream] [connections,...] [--threads] [--strace] [--shared]

Wake-ups (voluntary context switches of every thread) and messages (read and write system
calls) per metered request, for every process of the stack, at each number of connections
(default: 1000 json 1,32). Starts its own PostgreSQL, NATS and Redis as docker-compose.yml
configures them, then the stack; prints a table per number of connections. Writes nothing.

  --threads   split each process by thread (main, V8 workers, libuv workers, ...)
  --strace    system calls by name (strace -f -c on every process; slows them)
  --shared    use the machine's PostgreSQL, NATS and Redis (their rows leave the total)

Environment: BENCH_ENV, SERVICE_NODE_ARGS, BENCH_APPS_ROOT, BENCH_LOG_LEVEL (as the other
benchmarks), PRIVATE_NATS_GOMAXPROCS (default 1, as deployed; docs/decisions/0307).`);
  process.exit(0);
}
const args = process.argv.slice(2).filter((a) => !a.startsWith("--"));
const requests = Number(args[0] ?? 1000);
const mode = (args[1] ?? "json") as "json" | "stream";
const connectionCounts = (args[2] ?? "1,32").split(",").map(Number);
const shared = process.argv.includes("--shared");
const withStrace = process.argv.includes("--strace");
const byThread = process.argv.includes("--threads");

/** `cpuNs`: the thread's run time (schedstat), secondary: it grows with the machine's load. */
type Counts = { wakeups: number; preempted: number; reads: number; writes: number; cpuNs: number };
const ZERO: Counts = { wakeups: 0, preempted: 0, reads: 0, writes: 0, cpuNs: 0 };
/** pid → tid → (thread kind, counts so far). */
type ProcSample = Map<number, Map<number, { kind: string; counts: Counts }>>;

/** What kind of thread: the main thread, else its name without digits (`libuv-worker`, `V8 DefaultWorke`, `bio_close_file`). */
function kindOf(pid: number, tid: number, comm: string): string {
  if (pid === tid) return "main";
  return comm.replace(/[\s\d]+$/, "") || "thread";
}

function sampleProcess(pid: number): Map<number, { kind: string; counts: Counts }> {
  const out = new Map<number, { kind: string; counts: Counts }>();
  let tids: string[] = [];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return out; // gone
  }
  for (const t of tids) {
    const tid = Number(t);
    try {
      const status = readFileSync(`/proc/${pid}/task/${t}/status`, "utf8");
      const io = readFileSync(`/proc/${pid}/task/${t}/io`, "utf8");
      const comm = readFileSync(`/proc/${pid}/task/${t}/comm`, "utf8").trim();
      const cpuNs = Number(readFileSync(`/proc/${pid}/task/${t}/schedstat`, "utf8").split(" ")[0]);
      const field = (text: string, name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)`, "m").exec(text)?.[1] ?? 0);
      out.set(tid, {
        kind: kindOf(pid, tid, comm),
        counts: {
          wakeups: field(status, "voluntary_ctxt_switches"),
          preempted: field(status, "nonvoluntary_ctxt_switches"),
          reads: field(io, "syscr"),
          writes: field(io, "syscw"),
          cpuNs,
        },
      });
    } catch {
      // the thread ended meanwhile
    }
  }
  return out;
}

type Group = { name: string; pids: () => number[] | Promise<number[]>; outside?: boolean };
type Sample = Map<string, ProcSample>;

async function sample(groups: Group[]): Promise<Sample> {
  const out: Sample = new Map();
  for (const g of groups) {
    const procs: ProcSample = new Map();
    for (const pid of await g.pids()) procs.set(pid, sampleProcess(pid));
    out.set(g.name, procs);
  }
  return out;
}

/** Per group, per thread kind: what the threads did between two samples (threads that started count from zero; ended ones are lost). */
function between(before: Sample, after: Sample): Map<string, Map<string, Counts>> {
  const out = new Map<string, Map<string, Counts>>();
  for (const [name, procs] of after) {
    const kinds = new Map<string, Counts>();
    for (const [pid, threads] of procs) {
      for (const [tid, { kind, counts }] of threads) {
        const from = before.get(name)?.get(pid)?.get(tid)?.counts ?? ZERO;
        const sum = kinds.get(kind) ?? { ...ZERO };
        sum.wakeups += Math.max(0, counts.wakeups - from.wakeups);
        sum.preempted += Math.max(0, counts.preempted - from.preempted);
        sum.reads += Math.max(0, counts.reads - from.reads);
        sum.writes += Math.max(0, counts.writes - from.writes);
        sum.cpuNs += Math.max(0, counts.cpuNs - from.cpuNs);
        kinds.set(kind, sum);
      }
    }
    out.set(name, kinds);
  }
  return out;
}

const add = (a: Counts, b: Counts): Counts => ({
  wakeups: a.wakeups + b.wakeups,
  preempted: a.preempted + b.preempted,
  reads: a.reads + b.reads,
  writes: a.writes + b.writes,
  cpuNs: a.cpuNs + b.cpuNs,
});

const servers = shared ? undefined : await useOwnServers();
const dbPort = Number(new URL(process.env.DATABASE_URL ?? "postgresql://127.0.0.1:5432").port || 5432);
const mock = await startMock("k");
const gw = await startGateway(mock.url, "k");
const url = `${gw.url}/v1/apps/ai/bench/v1/chat/completions`;
const headers = { "content-type": "application/json", "x-api-key": gw.key };
const databases = new Map(
  await Promise.all(PROCS.map(async (s) => [(await gw.stack.sql<{ db: string }>(s, "SELECT current_database() AS db"))[0]!.db, s] as const)),
);

/** The backends of this benchmark's own queries (the snapshots' connections), found by their client ports. */
const ownBackendPorts = (): Set<number> => {
  const out = new Set<number>();
  try {
    for (const line of execFileSync("ss", ["-tnpH", "dport", "=", `:${dbPort}`], { encoding: "utf8" }).split("\n")) {
      if (!line.includes(`pid=${process.pid},`)) continue;
      const local = line.trim().split(/\s+/)[3];
      if (local) out.add(Number(local.split(":").pop()));
    }
  } catch {
    // no ss: they stay in their database's row
  }
  return out;
};
type Backend = { pid: number; datname: string | null; backend_type: string; client_port: number | null };
let backends: Backend[] = [];
const snapshotBackends = async () => {
  const own = ownBackendPorts();
  const rows = await gw.stack.sql<Backend>("ledger", "SELECT pid, datname, backend_type, client_port FROM pg_stat_activity");
  backends = rows.filter((b) => b.client_port === null || !own.has(b.client_port));
};

const groups: Group[] = [
  ...PROCS.map((name) => ({ name, pids: () => [gw.stack.process(name).pid ?? 0].filter(Boolean) })),
  { name: "mock provider", pids: () => [mock.pid] },
  ...PROCS.map((service) => ({
    name: `postgres (${service})`,
    pids: () => backends.filter((b) => b.datname && databases.get(b.datname) === service).map((b) => b.pid),
  })),
  servers
    ? {
        name: "postgres (own processes)",
        // The postmaster and its children that are not client backends: WAL writer, checkpointer, background writer, ...
        pids: () => [
          servers.postmaster,
          ...children(servers.postmaster).filter((pid) => !backends.some((b) => b.pid === pid && b.backend_type === "client backend")),
        ],
      }
    : { name: "postgres (own processes, shared)", pids: () => pidsOf("^postgres: .*(checkpointer|background writer|walwriter|launcher)"), outside: true },
  servers ? { name: "nats", pids: () => [servers.nats] } : { name: "nats (shared)", pids: () => pidsOf("nats-server"), outside: true },
  servers ? { name: "redis", pids: () => [servers.redis] } : { name: "redis (shared)", pids: () => pidsOf("redis-server"), outside: true },
  { name: "load generator (this process)", pids: () => [process.pid], outside: true },
];

const straceAll = async (dir: string) => {
  const pids = (
    await Promise.all(groups.filter((g) => !g.name.startsWith("load")).map(async (g) => (await g.pids()).map((pid) => [g.name, pid] as const)))
  ).flat();
  const running = pids.map(([name, pid]) => ({
    name,
    file: join(dir, `${pid}.txt`),
    child: spawn("strace", ["-f", "-c", "-p", String(pid), "-o", join(dir, `${pid}.txt`)], { stdio: "ignore" }),
  }));
  await new Promise((r) => setTimeout(r, 1500));
  return async () => {
    for (const r of running) r.child.kill("SIGINT");
    await Promise.all(running.map((r) => new Promise((resolve) => (r.child.exitCode !== null ? resolve(null) : r.child.once("exit", resolve)))));
    const byGroup = new Map<string, Map<string, number>>();
    for (const r of running) {
      let text = "";
      try {
        text = readFileSync(r.file, "utf8");
      } catch {
        continue;
      }
      const calls = byGroup.get(r.name) ?? new Map<string, number>();
      for (const line of text.split("\n")) {
        const f = line.trim().split(/\s+/);
        if (f.length < 5 || !/^[\d.]+$/.test(f[0]!) || f.at(-1) === "total") continue;
        calls.set(f.at(-1)!, (calls.get(f.at(-1)!) ?? 0) + Number(f[3]));
      }
      byGroup.set(r.name, calls);
    }
    return byGroup;
  };
};

const per = (n: number, of: number) => (n / of).toFixed(2).padStart(7);
const warm = async (connections: number) => {
  await load({ label: "warm", url, connections, durationSeconds: 0, amount: 300, method: "POST", headers, body: body(mode, "bench-small") });
  await new Promise((r) => setTimeout(r, 2_000)); // let the outboxes, batches and consumers settle
};

console.log(
  `# wake-ups and messages per metered ${mode} request (${shared ? "the machine's PostgreSQL, NATS and Redis" : "private PostgreSQL, NATS and Redis"})`,
);
for (const connections of connectionCounts) {
  await warm(connections);
  await snapshotBackends();
  // The idle rate of the same processes just before, to say how much of a window is background.
  const idleBefore = await sample(groups);
  const idleStart = performance.now();
  await new Promise((r) => setTimeout(r, 5_000));
  await snapshotBackends();
  const idleAfter = await sample(groups);
  const idleSeconds = (performance.now() - idleStart) / 1000;
  const idle = between(idleBefore, idleAfter);

  const stopStrace = withStrace ? await straceAll(mkdtempSync(join(tmpdir(), "gw-wakeups-strace-"))) : undefined;
  await snapshotBackends();
  const linesBefore = new Map(PROCS.map((name) => [name, gw.stack.logs(name).length]));
  const before = await sample(groups);
  const started = performance.now();
  const r = await load({ label: "counted", url, connections, durationSeconds: 0, amount: requests, method: "POST", headers, body: body(mode, "bench-small") });
  // The settlements, posts, relays and consumers that follow the answers.
  await new Promise((resolve) => setTimeout(resolve, 1_500));
  const seconds = (performance.now() - started) / 1000;
  await snapshotBackends();
  const after = await sample(groups);
  const lines = PROCS.map((name) => [name, gw.stack.logs(name).length - linesBefore.get(name)!] as const).filter(([, n]) => n > 0);
  const syscalls = stopStrace ? await stopStrace() : undefined;
  const window = between(before, after);

  console.log(
    `\n## ${connections} connection(s): ${r.ok} ok of ${requests} (${r.errors} errors, ${r.non2xx} non-2xx), ${r.requestsPerSecond.toFixed(0)} req/s, window ${seconds.toFixed(1)} s`,
  );
  console.log("| process | wake-ups | messages (reads + writes) | reads | writes | preempted | CPU ms | idle wake-ups/s |");
  console.log("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
  let total = { ...ZERO };
  for (const [name, kinds] of window) {
    const sum = [...kinds.values()].reduce(add, { ...ZERO });
    const idleSum = [...(idle.get(name)?.values() ?? [])].reduce(add, { ...ZERO });
    const outside = groups.find((g) => g.name === name)?.outside;
    if (!outside) total = add(total, sum);
    console.log(
      `| ${name} | ${per(sum.wakeups, requests)} | ${per(sum.reads + sum.writes, requests)} | ${per(sum.reads, requests)} | ${per(sum.writes, requests)} | ${per(sum.preempted, requests)} | ${per(sum.cpuNs / 1e6, requests)} | ${(idleSum.wakeups / idleSeconds).toFixed(1)} |`,
    );
    if (byThread)
      for (const [kind, c] of [...kinds].sort((a, b) => b[1].wakeups - a[1].wakeups))
        if (c.wakeups / requests >= 0.01 || (c.reads + c.writes) / requests >= 0.01)
          console.log(
            `| · ${kind} | ${per(c.wakeups, requests)} | ${per(c.reads + c.writes, requests)} | ${per(c.reads, requests)} | ${per(c.writes, requests)} | ${per(c.preempted, requests)} | ${per(c.cpuNs / 1e6, requests)} | |`,
          );
  }
  console.log(
    `| **total (stack)** | ${per(total.wakeups, requests)} | ${per(total.reads + total.writes, requests)} | ${per(total.reads, requests)} | ${per(total.writes, requests)} | ${per(total.preempted, requests)} | ${per(total.cpuNs / 1e6, requests)} | |`,
  );
  // Each line is a write to stdout (a pipe to this process here, to the log collector in production).
  console.log(
    `\nlog lines per request (LOG_LEVEL ${process.env.BENCH_LOG_LEVEL ?? "warn"}): ${lines.map(([name, n]) => `${name} ${(n / requests).toFixed(2)}`).join(", ") || "none"}`,
  );
  if (syscalls) {
    console.log(`\nsystem calls per request (strace -f -c, the window plus ${1.5} s before it):`);
    for (const [name, calls] of syscalls) {
      const top = [...calls].filter(([, n]) => n / requests >= 0.05).sort((a, b) => b[1] - a[1]);
      console.log(`  ${name}: ${top.map(([call, n]) => `${call} ${(n / requests).toFixed(2)}`).join(", ")}`);
    }
  }
}
await gw.stop();
await mock.stop();
await servers?.stop();
