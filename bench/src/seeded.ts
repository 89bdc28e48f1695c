// Does a metered call cost more once the databases are full (issue 36)? This gateway alone,
// metered JSON (or stream) at 1 and 32 connections, measured three times in one run: on
// empty databases, after seeding them (seed.ts: 1,000,000 usage records over 10,000
// tenants with their ledger history and closed allotments), and after SUSTAIN_SECONDS
// (default 300) of sustained load at 32 connections on them. Beside the figures: what
// PostgreSQL says about the hot tables (updates, HOT updates, dead rows, sizes) and
// statements (pg_stat_statements, when the server preloads it) in each phase.
//   pnpm --filter @gateway/bench seeded [json|stream]
import { meanCpu, measure, runOk, type Measured, type Mode, type Target } from "./compare.js";
import {
  resetStatements,
  statementStats,
  tableDelta,
  tableStats,
  walPosition,
  walStats,
  type StatementStats,
  type TableStats,
  type WalStats,
} from "./db-stats.js";
import { startGateway } from "./gateway.js";
import { DEFAULT_SEED, seed } from "./seed.js";
import { startMock } from "./targets.js";

if (process.argv.includes("--help") || process.argv.includes("-h")) {
  console.log(`Usage: pnpm --filter @gateway/bench seeded [json|stream]

This gateway alone, metered, at 1 and 32 connections: on empty databases, seeded ones,
and after sustained load; prints markdown tables, writes no file. Environment:
QUICK_ROUNDS (default 1), SUSTAIN_SECONDS (default 300), SEED_TENANTS (10000),
SEED_RECORDS (1000000), BENCH_APPS_ROOT (measure another checkout's build).`);
  process.exit(0);
}
const mode: Mode = process.argv[2] === "stream" ? "stream" : "json";
const rounds = Number(process.env.QUICK_ROUNDS ?? 1);
const sustainSeconds = Number(process.env.SUSTAIN_SECONDS ?? 300);
const size = {
  ...DEFAULT_SEED,
  tenants: Number(process.env.SEED_TENANTS ?? DEFAULT_SEED.tenants),
  records: Number(process.env.SEED_RECORDS ?? DEFAULT_SEED.records),
};

type Phase = { name: string; runs: Map<number, Measured[]>; tables: TableStats[]; statements: StatementStats[]; wal: WalStats[] };

const mock = await startMock("k");
const gateway = await startGateway(mock.url, "k");
const target: Target = {
  name: "gateway",
  url: `${gateway.url}/v1/apps/ai/bench/v1/chat/completions`,
  headers: { "x-api-key": gateway.key },
  groups: gateway.groups(),
};
const phases: Phase[] = [];
let failed = false;
let rps32 = 300;

async function phase(name: string): Promise<void> {
  const statements = await resetStatements(gateway.stack);
  const before = await tableStats(gateway.stack);
  const lsn = await walPosition(gateway.stack);
  const runs = new Map<number, Measured[]>();
  for (const connections of [1, 32]) {
    const warm = await measure(target, mode, connections, connections === 1 ? 200 : 1_000, gateway, () => "bench-small");
    failed ||= !runOk(warm);
    const list: Measured[] = [];
    for (let i = 0; i < rounds; i++) list.push(await measure(target, mode, connections, connections === 1 ? 400 : 3_000, gateway, () => "bench-small"));
    failed ||= !list.every(runOk);
    runs.set(connections, list);
    if (connections === 32) rps32 = list.reduce((s, r) => s + r.requestsPerSecond, 0) / list.length;
  }
  const p: Phase = {
    name,
    runs,
    tables: tableDelta(before, await tableStats(gateway.stack)),
    statements: statements ? await statementStats(gateway.stack) : [],
    wal: await walStats(gateway.stack, lsn),
  };
  phases.push(p);
  console.error(`${name}: ${summary(p)}`);
}

function mean(list: Measured[], f: (m: Measured) => number): number {
  return list.reduce((s, m) => s + f(m), 0) / Math.max(1, list.length);
}

function cpuOf(list: Measured[]): number {
  return [...meanCpu(list)].filter(([k]) => !k.startsWith("load generator") && k !== "mock provider").reduce((s, [, v]) => s + v, 0);
}

function summary(p: Phase): string {
  return [...p.runs]
    .map(
      ([c, list]) =>
        `c=${c} ${mean(list, (m) => m.requestsPerSecond).toFixed(0)} req/s p50 ${mean(list, (m) => m.p50).toFixed(2)} CPU ${cpuOf(list).toFixed(2)} ms/req`,
    )
    .join(" · ");
}

try {
  await phase("empty");
  const seeded = await seed(gateway.stack, size);
  console.error(`seeded in ${seeded.seconds.toFixed(0)} s: ${JSON.stringify(seeded)}`);
  await phase("seeded");
  if (sustainSeconds > 0) {
    const amount = Math.round(rps32 * sustainSeconds);
    const started = Date.now();
    const sustained = await measure(target, mode, 32, amount, gateway, () => "bench-small");
    failed ||= !runOk(sustained);
    console.error(
      `sustained: ${amount} requests in ${((Date.now() - started) / 1000).toFixed(0)} s, ${sustained.requestsPerSecond.toFixed(0)} req/s, accounting ${runOk(sustained) ? "ok" : "FAILED"}`,
    );
    await phase(`after ${sustainSeconds} s of load`);
  }
  const closeout = await gateway.closeout(90_000);
  console.error(`closeout: ${JSON.stringify(closeout, (_k, v) => (typeof v === "bigint" ? v.toString() : v))}`);
  report(closeout.allotments.notClosed === 0);
} finally {
  await gateway.stop();
  await mock.stop();
}

function report(closed: boolean): void {
  const out: string[] = [];
  out.push(`| figure | ${phases.map((p) => p.name).join(" | ")} |`, `| --- | ${phases.map(() => "---:").join(" | ")} |`);
  for (const c of [1, 32]) {
    const row = (label: string, f: (list: Measured[]) => string) => out.push(`| ${label} | ${phases.map((p) => f(p.runs.get(c) ?? [])).join(" | ")} |`);
    row(`${mode} c=${c} req/s`, (l) => mean(l, (m) => m.requestsPerSecond).toFixed(0));
    row(`${mode} c=${c} p50 ms`, (l) => mean(l, (m) => m.p50).toFixed(2));
    row(`${mode} c=${c} CPU ms/request (stack, without load generator and mock)`, (l) => cpuOf(l).toFixed(2));
    row(`${mode} c=${c} of which postgres (managed-ai)`, (l) => (meanCpu(l).get("postgres (managed-ai)") ?? 0).toFixed(2));
  }
  for (const s of phases[0]?.statements ?? []) {
    const row = (label: string, f: (x: StatementStats) => string) =>
      out.push(
        `| ${label} | ${phases
          .map((p) => p.statements.find((x) => x.name === s.name))
          .map((x) => (x ? f(x) : "–"))
          .join(" | ")} |`,
      );
    row(`${s.name}: calls`, (x) => String(x.calls));
    row(`${s.name}: mean ms`, (x) => x.meanMs.toFixed(3));
    row(`${s.name}: buffer hits per call`, (x) => x.hitsPerCall.toFixed(1));
    // Group commit puts more records into a call as the rate grows: per record too.
    row(`${s.name}: records per call`, (x) => x.rowsPerCall.toFixed(2));
    row(`${s.name}: WAL bytes per record`, (x) => x.walBytesPerRow.toFixed(0));
  }
  // What each request wrote (pg_walinspect), per record opened in the phase.
  const opened = (p: Phase) =>
    Math.max(1, (p.statements.find((x) => x.name === "record open")?.calls ?? 0) * (p.statements.find((x) => x.name === "record open")?.rowsPerCall ?? 0));
  for (const table of [...new Set(phases.flatMap((p) => p.wal.map((w) => w.table)))].sort()) {
    const row = (label: string, f: (x: WalStats, p: Phase) => string) =>
      out.push(`| ${label} | ${phases.map((p) => ((x) => (x ? f(x, p) : "–"))(p.wal.find((w) => w.table === table))).join(" | ")} |`);
    row(`${table}: index entries written per request`, (x, p) => (x.indexEntries / opened(p)).toFixed(2));
    row(
      `${table}: heap inserts / updates (HOT) / deletes per request`,
      (x, p) =>
        `${(x.inserts / opened(p)).toFixed(2)} / ${(x.updates / opened(p)).toFixed(2)} (${(x.hot / opened(p)).toFixed(2)}) / ${(x.deletes / opened(p)).toFixed(2)}`,
    );
  }
  for (const t of phases[0]?.tables ?? []) {
    const row = (label: string, f: (x: TableStats) => string) =>
      out.push(
        `| ${label} | ${phases
          .map((p) => p.tables.find((x) => x.table === t.table))
          .map((x) => (x ? f(x) : "–"))
          .join(" | ")} |`,
      );
    row(`${t.table}: updates (HOT)`, (x) => `${x.updates} (${x.hot})`);
    row(`${t.table}: live / dead rows at the end`, (x) => `${x.live} / ${x.dead}`);
    row(`${t.table}: heap / indexes MB`, (x) => `${(x.heapBytes / 1e6).toFixed(1)} / ${(x.indexBytes / 1e6).toFixed(1)}`);
  }
  out.push("", `accounting of every run: ${failed ? "FAILED" : "ok"}; allotments closed at the end: ${closed ? "ok" : "NOT CLOSED"}`);
  console.log(out.join("\n"));
  if (failed || !closed) process.exitCode = 1;
}
