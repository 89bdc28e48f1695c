// The event pipeline's work per metered request (issue 36): events published by type,
// relay rounds and consumer batches (the services' own metrics), JetStream messages
// (the stream's count), audit rows, and CPU per process, over one run at N connections.
//   pnpm --filter @gateway/bench exec tsx src/event-counts.ts [requests] [json|stream] [connections]
// Environment: BENCH_ENV, BENCH_APPS_ROOT (as the other benchmarks).
import { body } from "./compare.js";
import { cpuPerRequest, sampleCpu } from "./cpu.js";
import { PROCS, startGateway } from "./gateway.js";
import { load } from "./load.js";
import { startMock } from "./targets.js";

if (process.argv.includes("--help") || process.argv.includes("-h")) {
  console.log(`Usage: pnpm --filter @gateway/bench exec tsx src/event-counts.ts [requests] [json|stream] [connections]

The event pipeline per metered request (default 3000 json 32): JetStream messages by subject,
audit rows, relay rounds (publishing and all), consumer counts, and CPU per process, over
one run after a warm-up. On the machine's PostgreSQL, NATS and Redis. Writes nothing.
Environment: BENCH_ENV, BENCH_APPS_ROOT (as the other benchmarks), EVENT_COUNTS_JOBS_ENV (jobs alone, JSON).`);
  process.exit(0);
}
const requests = Number(process.argv[2] ?? 3000);
const mode = (process.argv[3] ?? "json") as "json" | "stream";
const connections = Number(process.argv[4] ?? 32);
const mock = await startMock("k");
// EVENT_COUNTS_JOBS_ENV: extra environment for jobs alone, as JSON (the audit consumer's experiments).
const gw = await startGateway(mock.url, "k", {}, { jobs: JSON.parse(process.env.EVENT_COUNTS_JOBS_ENV ?? "{}") as Record<string, string> });
const url = `${gw.url}/v1/apps/ai/bench/v1/chat/completions`;
const headers = { "content-type": "application/json", "x-api-key": gw.key };
const FOLLOWED =
  /^((?:log_relay_\w+|outbox_\w+|events_checkpointed_total|events_consumed_total|managed_ai_batch_size_(?:sum|count)|ledger_movement_batch_size_(?:sum|count))(?:\{[^}]*\})?) (\S+)$/gm;

async function metrics(): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const service of PROCS) {
    const text = await fetch(gw.stack.metricsUrl(service)).then(
      (r) => r.text(),
      () => "",
    );
    for (const m of text.matchAll(FOLLOWED)) out.set(`${service} ${m[1]}`, Number(m[2]));
  }
  return out;
}

async function streamCounts(): Promise<{ messages: number; bySubject: Record<string, number> }> {
  const nc = await gw.stack.nats();
  const jsm = await nc.jetstreamManager();
  // The stream of the stack's namespace (packages/events subjects.ts: `<ns>_events`).
  const info = await jsm.streams.info(`${gw.stack.namespace}_events`, { subjects_filter: ">" });
  return { messages: info.state.messages, bySubject: (info.state.subjects ?? {}) as Record<string, number> };
}

/** Rounds of each relay: lookups of its checkpoint row (every round, publishing or not) and its updates (rounds that published). */
async function relayRounds(): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const service of ["managed-ai", "ledger"] as const) {
    const [row] = await gw.stack.sql<{ scans: string; upd: string }>(
      service,
      "SELECT (coalesce(idx_scan, 0) + coalesce(seq_scan, 0))::text AS scans, n_tup_upd::text AS upd FROM pg_stat_user_tables WHERE relname = 'relay_checkpoints'",
    );
    out.set(`${service} relay_checkpoints lookups`, Number(row?.scans ?? 0));
    out.set(`${service} relay_checkpoints updates`, Number(row?.upd ?? 0));
  }
  return out;
}

async function auditRows(): Promise<number> {
  const [row] = await gw.stack.sql<{ n: string }>("jobs", "SELECT count(*)::text AS n FROM audit_events");
  return Number(row!.n);
}

try {
  await load({ label: "warm", url, connections, durationSeconds: 0, amount: 1000, method: "POST", headers, body: body(mode, "bench-small") });
  await new Promise((r) => setTimeout(r, 2_000));
  await gw.snapshotBackends();
  const m0 = await metrics();
  const s0 = await streamCounts();
  const a0 = await auditRows();
  const r0 = await relayRounds();
  const c0 = sampleCpu(gw.groups());
  const r = await load({ label: "counted", url, connections, durationSeconds: 0, amount: requests, method: "POST", headers, body: body(mode, "bench-small") });
  await new Promise((res) => setTimeout(res, 2_000));
  const cpu = cpuPerRequest(c0, sampleCpu(gw.groups()), r.total);
  const m1 = await metrics();
  const s1 = await streamCounts();
  const a1 = await auditRows();
  await new Promise((res) => setTimeout(res, 1_000)); // statistics reach the views within about 1 s
  const r1 = await relayRounds();
  const n = r.ok;
  console.log(`${mode} c=${connections}: ${r.requestsPerSecond.toFixed(0)} req/s, ${n} ok, ${r.errors + r.non2xx} failed`);
  console.log(`JetStream messages per request: ${((s1.messages - s0.messages) / n).toFixed(3)}`);
  for (const [subject, count] of Object.entries(s1.bySubject)) {
    const d = count - (s0.bySubject[subject] ?? 0);
    if (d > 0) console.log(`  ${subject.split(".").slice(-2).join(".")}: ${(d / n).toFixed(3)}`);
  }
  console.log(`audit rows per request: ${((a1 - a0) / n).toFixed(3)}`);
  for (const [k, v] of m1) {
    const d = v - (m0.get(k) ?? 0);
    if (d !== 0) console.log(`  ${k}: ${d} (${(d / n).toFixed(4)} per request)`);
  }
  for (const [k, v] of r1) console.log(`  ${k}: ${v - (r0.get(k) ?? 0)} (${((v - (r0.get(k) ?? 0)) / n).toFixed(4)} per request)`);
  const total = [...cpu.values()].reduce((a, b) => a + b, 0);
  console.log(`CPU ${total.toFixed(3)} ms/request: ${[...cpu].map(([k, v]) => `${k.replace(" (this process)", "")} ${v.toFixed(3)}`).join(" · ")}`);
} finally {
  await gw.stop();
  await mock.stop();
}
process.exit(0);
