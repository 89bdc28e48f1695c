// The benchmark of record: this gateway's metered invocation against the Portkey
// gateway and against the provider directly, in one run on one machine, plus the
// ledger's reserve+capture pairs and the cost of API key verification.
//   pnpm bench            (scripts/bench.sh: set-up, build, then this; writes docs/benchmarks.md)
// BENCH_SECONDS (default 8) sets the length of each measured run.
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT } from "@gateway/testkit";
import { auditOk, meanCpu, measure, runOk, targets, type Measured, type Mode, type Target } from "./compare.js";
import { resetStatements, statementStats, tableDelta, tableStats, type StatementStats, type TableStats } from "./db-stats.js";
import { closeoutOk, startGateway, type Closeout } from "./gateway.js";
import { measureKeys } from "./keys.js";
import { machine } from "./machine.js";
import { DEFAULT_SEED, seed, type SeedReport } from "./seed.js";
import { serverSettings, useOwnServers } from "./servers.js";
import { startMock, startPortkey } from "./targets.js";

if (process.argv.includes("--help") || process.argv.includes("-h")) {
  console.log(`Usage: pnpm bench   (this file runs after the set-up of scripts/bench.sh)

This gateway vs the Portkey gateway vs the provider directly, the ledger and key
verification; rewrites docs/benchmarks.md. Environment: BENCH_SECONDS (default 8),
BENCH_SEED (default 1: after the empty-database runs, seed 1,000,000 usage records over
10,000 tenants and measure this gateway again, then after BENCH_SUSTAIN_SECONDS, default
300, of sustained load; 0: empty databases only), BENCH_SERVERS (default own: PostgreSQL,
NATS and Redis of the benchmark's own, started with docker-compose.yml's settings;
machine: the machine's shared servers, DATABASE_URL, NATS_URL and REDIS_URL).`);
  process.exit(0);
}
const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const MOCK_KEY = "sk-bench-mock-key";
const modelOf = (t: Target) => (t.name === "gateway" ? "bench-small" : "mock-small");

const SERVERS = process.env.BENCH_SERVERS ?? "own";
if (SERVERS !== "own" && SERVERS !== "machine") throw new Error(`BENCH_SERVERS: "own" or "machine", not ${SERVERS}`);
// The servers as deployed (docker-compose.yml's settings, autovacuum included), not the
// machine's shared ones, whose settings differ (autovacuum off) and whose other clients count.
const own = SERVERS === "own" ? await useOwnServers() : undefined;
const serversLine = own
  ? `PostgreSQL, NATS and Redis of the benchmark's own, started with docker-compose.yml's settings: ${serverSettings(own)}`
  : "the machine's shared PostgreSQL, NATS and Redis (BENCH_SERVERS=machine): their settings and other clients are in the figures";
const mock = await startMock(MOCK_KEY);
const portkey = await startPortkey();
const gateway = await startGateway(mock.url, MOCK_KEY, {}, {}, own).catch(async (err: unknown) => {
  await portkey.stop();
  await mock.stop();
  await own?.stop();
  throw err;
});
const all = targets(mock, portkey, gateway, MOCK_KEY);
const results: Measured[] = [];
let closeout: Closeout | undefined;
const SEEDING = process.env.BENCH_SEED !== "0";
const SUSTAIN = Number(process.env.BENCH_SUSTAIN_SECONDS ?? 300);
/** This gateway on empty databases, seeded ones, and after sustained load (issue 36). */
type Phase = { name: string; runs: Measured[]; tables: TableStats[]; statements: StatementStats[] };
const phases: Phase[] = [];
let seeded: SeedReport | undefined;
let sustained: Measured | undefined;
const gatewayTarget = () => all.find((t) => t.name === "gateway")!;

/** This gateway alone, every mode and connection count, a warm-up and two runs each, with the databases' figures. */
async function gatewayPhase(name: string): Promise<void> {
  const statements = await resetStatements(gateway.stack);
  const before = await tableStats(gateway.stack);
  const runs: Measured[] = [];
  for (const mode of ["json", "stream"] as Mode[]) {
    for (const connections of [1, 32]) {
      const warm = await measure(gatewayTarget(), mode, connections, connections === 1 ? 200 : 1_000, gateway, modelOf);
      const amount = Math.max(200, Math.min(100_000, Math.round(warm.requestsPerSecond * SECONDS)));
      for (let i = 0; i < 2; i++) runs.push({ ...(await measure(gatewayTarget(), mode, connections, amount, gateway, modelOf)), connections });
    }
  }
  phases.push({ name, runs, tables: tableDelta(before, await tableStats(gateway.stack)), statements: statements ? await statementStats(gateway.stack) : [] });
  console.log(`${name}: ${runs.map((r) => `${r.mode} c=${r.connections} ${Math.round(r.requestsPerSecond)} req/s`).join(", ")}`);
}

try {
  // Every target answers before anything is measured.
  for (const t of all) {
    const probe = await measure(t, "json", 1, 20, gateway, modelOf);
    if (probe.ok !== 20) throw new Error(`${t.name} does not answer 200: ${probe.non2xx} non-2xx, ${probe.errors} errors`);
  }
  for (const mode of ["json", "stream"] as Mode[]) {
    for (const connections of [1, 32]) {
      // Warm-up per target (a fixed number of requests, so none is cut off and no
      // hold is left behind), which also sizes its measured runs to about SECONDS each.
      const amount = new Map<string, number>();
      for (const t of all) {
        const warm = await measure(t, mode, connections, connections === 1 ? 200 : 1_000, gateway, modelOf);
        amount.set(t.name, Math.max(200, Math.min(100_000, Math.round(warm.requestsPerSecond * SECONDS))));
      }
      // A B C C B A: drift over the run hits every target alike.
      for (const t of [...all, ...[...all].reverse()]) {
        const m = await measure(t, mode, connections, amount.get(t.name)!, gateway, modelOf);
        results.push({ ...m, connections });
        console.log(
          `${mode} c=${connections} ${t.name}: ${Math.round(m.requestsPerSecond)} req/s, p50 ${m.p50} ms${m.audit ? `, accounting ${auditOk(m) ? "ok" : "DRIFT"}` : ""}`,
        );
      }
    }
  }
  if (SEEDING) {
    // The same gateway runs on full databases (issue 36): empty (this gateway alone, as
    // below), seeded, and after sustained load, which leaves dead row versions behind.
    await gatewayPhase("empty");
    seeded = await seed(gateway.stack, DEFAULT_SEED);
    console.log(`seeded in ${seeded.seconds.toFixed(0)} s`);
    await gatewayPhase("seeded");
    if (SUSTAIN > 0) {
      const json32 = phases[1]!.runs.filter((r) => r.mode === "json" && r.connections === 32);
      const rate = json32.reduce((n, r) => n + r.requestsPerSecond, 0) / Math.max(1, json32.length);
      sustained = { ...(await measure(gatewayTarget(), "json", 32, Math.round(rate * SUSTAIN), gateway, modelOf)), connections: 32 };
      console.log(`sustained: ${Math.round(sustained.requestsPerSecond)} req/s for ${SUSTAIN} s`);
      await gatewayPhase(`after ${SUSTAIN} s of load`);
    }
  }
  // The allotments close once idle (ALLOTMENT_IDLE_SECONDS, found by the reconciler's next
  // pass): then the whole run's journal must equal its usage records.
  closeout = await gateway.closeout(90_000);
  console.log(`closeout: ${JSON.stringify(closeout, (_k, v) => (typeof v === "bigint" ? v.toString() : v))}`);
} catch (err) {
  await gateway.stop();
  await portkey.stop();
  await mock.stop();
  await own?.stop();
  throw err;
}
await gateway.stop();
await portkey.stop();
await mock.stop();

// The ledger's and the keys' benchmarks run on the same servers (DATABASE_URL above).
let ledgerTables: string[];
let keys: string;
try {
  ledgerTables = (["256", "1"] as const).map((tenants) =>
    execFileSync(
      process.execPath,
      [
        join(REPO_ROOT, "apps", "ledger", "bench", "reserve-capture.mjs"),
        "--seconds",
        String(Math.max(3, SECONDS / 2)),
        "--warmup",
        "1",
        "--levels",
        "1,32",
        "--tenants",
        tenants,
      ],
      {
        cwd: join(REPO_ROOT, "apps", "ledger"),
        encoding: "utf8",
      },
    )
      .split("\n")
      .filter((l) => l.startsWith("|") || l.startsWith("invariant"))
      .join("\n"),
  );
  keys = await measureKeys(Math.max(3, SECONDS / 2));
} finally {
  await own?.stop();
}

// ---- report ----
const avg = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
function row(mode: Mode, connections: number, target: Target["name"]) {
  const runs = results.filter((r) => r.mode === mode && r.connections === connections && r.target === target);
  return {
    rps: avg(runs.map((r) => r.requestsPerSecond)),
    p50: avg(runs.map((r) => r.p50)),
    p99: avg(runs.map((r) => r.p99)),
    errors: runs.reduce((n, r) => n + r.errors + r.non2xx, 0),
    cpu: meanCpu(runs),
  };
}

const lines: string[] = [];
for (const mode of ["json", "stream"] as Mode[]) {
  for (const connections of [1, 32]) {
    const direct = row(mode, connections, "direct");
    const peer = row(mode, connections, "portkey");
    for (const target of ["direct", "portkey", "gateway"] as const) {
      const r = row(mode, connections, target);
      const cpuTotal = [...r.cpu.entries()].filter(([k]) => !k.startsWith("load generator")).reduce((s, [, v]) => s + v, 0);
      lines.push(
        `| ${mode} | ${connections} | ${target} | ${Math.round(r.rps)} | ${r.p50.toFixed(2)} | ${(r.p50 - direct.p50).toFixed(2)} | ${r.p99.toFixed(2)} | ${(r.rps / peer.rps).toFixed(2)} | ${cpuTotal.toFixed(2)} | ${r.errors} |`,
      );
    }
  }
}

// The issue's targets, judged from the same runs.
const targetRows: string[] = [];
for (const mode of ["json", "stream"] as Mode[]) {
  const ratio = row(mode, 32, "gateway").rps / row(mode, 32, "portkey").rps;
  targetRows.push(`| ${mode}: throughput at 32 connections ÷ Portkey's | ≥ 1.00 | ${ratio.toFixed(2)} | ${ratio >= 1 ? "met" : "not met"} |`);
  const added = row(mode, 1, "gateway").p50 - row(mode, 1, "direct").p50;
  targetRows.push(`| ${mode}: added p50 at 1 connection over direct | ≤ 2.00 ms | ${added.toFixed(2)} ms | ${added <= 2 ? "met" : "not met"} |`);
}
for (const mode of ["json", "stream"] as Mode[]) {
  const runs = results.filter((r) => r.audit && r.mode === mode && r.connections === 32);
  const calls = avg(runs.map((r) => r.audit!.ledgerCallsPerRequest));
  targetRows.push(`| ${mode}: ledger calls per metered request at 32 connections | ≤ 0.10 | ${calls.toFixed(3)} | ${calls <= 0.1 ? "met" : "not met"} |`);
}
const phaseRuns = [...phases.flatMap((p) => p.runs), ...(sustained ? [sustained] : [])];
const failures = [...results, ...phaseRuns].filter((r) => !runOk(r)).length + (closeout && closeoutOk(closeout) ? 0 : 1);
targetRows.push(`| errors and accounting drift, every run | 0 | ${failures} runs with either | ${failures === 0 ? "met" : "not met"} |`);

const gatewayCpu: string[] = [];
for (const connections of [1, 32]) {
  for (const mode of ["json", "stream"] as Mode[]) {
    const r = row(mode, connections, "gateway");
    gatewayCpu.push(`| ${mode} | ${connections} | ${[...r.cpu.entries()].map(([k, v]) => `${k} ${v.toFixed(2)}`).join(" · ")} |`);
  }
}
const audits = [...results, ...phaseRuns]
  .filter((r) => r.audit)
  .map((r) => {
    const a = r.audit!;
    return `| ${r.mode} | ${r.connections} | ${a.okAnswers} | ${a.completed} | ${a.charged} | ${a.balanceDrop} | ${a.reservedAfter} | ${a.otherRecords} | ${a.caughtUpMs} | ${a.ledgerCallsPerRequest.toFixed(3)} | ${a.invariantOk ? "ok" : "VIOLATED"} | ${auditOk(r) ? "ok" : "**DRIFT**"} |`;
  });

function phaseTable(): string {
  if (phases.length === 0) return "Not measured (BENCH_SEED=0).";
  const lines = [
    `| mode | connections | figure | ${phases.map((p) => p.name).join(" | ")} |`,
    `| --- | ---: | --- | ${phases.map(() => "---:").join(" | ")} |`,
  ];
  for (const mode of ["json", "stream"] as Mode[]) {
    for (const connections of [1, 32]) {
      const of = (p: Phase) => p.runs.filter((r) => r.mode === mode && r.connections === connections);
      const directP50 = row(mode, connections, "direct").p50;
      const fig = (label: string, f: (runs: Measured[]) => string) =>
        lines.push(`| ${mode} | ${connections} | ${label} | ${phases.map((p) => f(of(p))).join(" | ")} |`);
      fig("req/s", (r) => avg(r.map((m) => m.requestsPerSecond)).toFixed(0));
      fig("added p50 ms", (r) => (avg(r.map((m) => m.p50)) - directP50).toFixed(2));
      fig("CPU ms/request", (r) =>
        [...meanCpu(r)]
          .filter(([k]) => !k.startsWith("load generator"))
          .reduce((s, [, v]) => s + v, 0)
          .toFixed(2),
      );
      fig("of which postgres (managed-ai)", (r) => (meanCpu(r).get("postgres (managed-ai)") ?? 0).toFixed(2));
    }
  }
  for (const s of phases[0]?.statements ?? []) {
    const fig = (label: string, f: (x: StatementStats) => string) =>
      lines.push(
        `| | | ${s.name}: ${label} | ${phases
          .map((p) => p.statements.find((x) => x.name === s.name))
          .map((x) => (x ? f(x) : "–"))
          .join(" | ")} |`,
      );
    fig("mean ms", (x) => x.meanMs.toFixed(3));
    fig("buffer hits per call", (x) => x.hitsPerCall.toFixed(1));
    fig("records per call", (x) => x.rowsPerCall.toFixed(2));
  }
  for (const t of phases[0]?.tables ?? []) {
    const fig = (label: string, f: (x: TableStats) => string) =>
      lines.push(
        `| | | ${t.table}: ${label} | ${phases
          .map((p) => p.tables.find((x) => x.table === t.table))
          .map((x) => (x ? f(x) : "–"))
          .join(" | ")} |`,
      );
    fig("updates (HOT)", (x) => `${x.updates} (${x.hot})`);
    fig("live / dead rows", (x) => `${x.live} / ${x.dead}`);
  }
  return lines.join("\n");
}

const report = `# Benchmarks

Generated by \`pnpm bench\` (scripts/bench.sh → bench/src/all.ts); do not edit the figures by hand.
Each measured run is a fixed number of requests sized to about ${SECONDS} s, so no request is
cut off; targets alternate A B C C B A after a warm-up, and figures are means of the two runs.

Machine: ${machine()}
Servers: ${serversLine}.
Everything runs on this machine at once: the load generator (autocannon, in the benchmark
process), the mock provider, the target, and for this gateway PostgreSQL, NATS and Redis.

## Metered invocation against a peer and the floor

- **direct**: the mock provider itself (node:http, instant answers): the floor.
- **portkey**: the Portkey open-source gateway (\`@portkey-ai/gateway\` 1.15.2 from npm, \`--headless\`),
  routed to the mock with \`x-portkey-provider: openai\` and \`x-portkey-custom-host\`.
- **gateway**: this gateway, fully metered: API key with every policy check (scope, alias,
  daily quota, per-minute rate, concurrency), price resolution, reservation in the ledger,
  the provider call, settlement to the exact charge, usage record, events to the audit trail.

p50/p99: latency of each answer as the load generator saw it (ms, from its per-response timings).
added p50 = p50 over direct's in the same mode. vs peer = throughput ÷ Portkey's. CPU = milliseconds of
CPU per request summed over the target's processes (without the load generator), from /proc.

| mode | connections | target | req/s | p50 | added p50 | p99 | vs peer | CPU ms/req | errors + non-2xx |
| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |
${lines.join("\n")}

### Targets (issue 7)

| target | wanted | measured | |
| --- | --- | --- | --- |
${targetRows.join("\n")}

### Empty and full databases (issue 36)

This gateway alone, each mode and connection count a warm-up and two runs: on empty
databases; after seeding them with bulk SQL (bench/src/seed.ts: ${DEFAULT_SEED.records.toLocaleString("en")} usage
records over ${DEFAULT_SEED.tenants.toLocaleString("en")} tenants, ${DEFAULT_SEED.allotmentsPerTenant} closed allotments each and their ledger journal,
vacuumed and analyzed${seeded ? `, ${Math.round(seeded.seconds)} s` : ""}); and after ${SUSTAIN} s of sustained JSON load at 32
connections on them${sustained ? ` (${Math.round(sustained.requestsPerSecond)} req/s)` : ""}. Added p50 is over direct's in the runs above. The
statements' figures are pg_stat_statements' (when the server preloads it), the tables'
pg_stat_user_tables' over each phase.

${phaseTable()}

What bounds this gateway, what each optimization bought, and how it was measured:
[docs/benchmarks/optimizations.md](benchmarks/optimizations.md).

### Where this gateway's CPU goes (ms per request)

PostgreSQL is split by the service whose database a backend serves; "other" is its
background work (WAL writer, checkpointer, autovacuum).

| mode | connections | processes |
| --- | ---: | --- |
${gatewayCpu.join("\n")}

### Accounting of every gateway run

A fast run that loses money is a failed run: after each run, the completed usage records must
equal the 200 answers, the sum of their final units must equal the tenant's balance drop,
nothing may stay reserved, no other record may appear, and the ledger's invariant must hold.
The balance drop is read from the ledger's balance view once the run's charges were posted
(decision 0028): the views are read every 100 ms after the last answer until they agree
with the run's records, for at most 5 s (a real drift never agrees); "views caught up after" is
how long that took (CONTRACT.md section 4 allows 1 s). A reading is the run's records (by
seq) and the balance, whose cost does not grow with the tenant's history; the invariant,
which sums the whole journal, is checked once afterwards, outside the timing. Ledger calls are every call the
ledger answered during the run (its gRPC server histogram, less the readings' own), per
answered request.

| mode | connections | 200 answers | completed records | charged units | balance drop | reserved after | other records | views caught up after (ms) | ledger calls / request | invariant | result |
| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |
${audits.join("\n")}

After the last run, once the reconciler had closed the tenant's allotments (they close when
idle, decision 0028; waited ${closeout?.waitedSeconds ?? "?"} s): every allotment closed, one
posted transfer per record charged from an allotment, and the journal's charges (posts and
captures) equal to the records' charges and to the balance drop, over the whole benchmark
(warm-ups included).

| allotments | closed | not closed | completed records | from allotments | posts in the journal | records' charges | posted + captured | balance drop | reserved | invariant | result |
| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |
${
  closeout
    ? `| ${closeout.allotments.opened} | ${closeout.allotments.closed} | ${closeout.allotments.notClosed} | ${closeout.records.completed} | ${closeout.records.fromAllotments} | ${closeout.journal.posts} | ${closeout.records.charged} | ${closeout.journal.postedUnits + closeout.journal.capturedUnits} | ${closeout.journal.balanceDrop} | ${closeout.journal.reserved} | ${closeout.invariantOk ? "ok" : "BROKEN"} | ${closeoutOk(closeout) ? "ok" : "DRIFT"} |`
    : "| not measured | | | | | | | | | | | FAILED |"
}

## Ledger: reserve + capture pairs

\`apps/ledger/bench/reserve-capture.mjs\` against a real ledger process over gRPC, called as managed-ai
calls it (a movement goes at once when no call is under way; those that arrive meanwhile go
together as one ApplyBatch), 256 tenants, then one hot tenant. Issue 16's target: at least 5,000
pairs per second at 32 concurrent callers.

${ledgerTables[0]}

One tenant:

${ledgerTables[1]}

## API key verification

${keys}
`;
writeFileSync(join(REPO_ROOT, "docs", "benchmarks.md"), report);
console.log(report);
if (failures > 0) {
  console.error("benchmark FAILED: errors or accounting drift (see the report)");
  process.exit(1);
}
