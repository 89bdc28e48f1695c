// CPU that the stack spends per second with no request at all, and at a paced low rate:
// the work done per unit of time or per wake-up rather than per request (timers, polls,
// lingers, GC of an idle heap). Prints ms of CPU per second for every process.
//   pnpm --filter @gateway/bench idle
import { sampleCpu, usageBetween, type CpuSample } from "./cpu.js";
import { body } from "./compare.js";
import { startGateway } from "./gateway.js";
import { startMock } from "./targets.js";

if (process.argv.includes("--help") || process.argv.includes("-h")) {
  console.log(`Usage: pnpm --filter @gateway/bench idle

Starts the stack as the benchmark does, then measures the CPU of every process
(ms per second) while idle and while paced at IDLE_RATES requests per second
(default "0,10,50"; one connection, metered JSON). Prints the figures, writes no file.
Environment: IDLE_SECONDS (default 10), IDLE_RATES, BENCH_ENV, SERVICE_NODE_ARGS,
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
const mock = await startMock("k");
const gateway = await startGateway(mock.url, "k");
const url = `${gateway.url}/v1/apps/ai/bench/v1/chat/completions`;
const request = () =>
  fetch(url, { method: "POST", headers: { "x-api-key": gateway.key, "content-type": "application/json" }, body: body("json", "bench-small") }).then(
    async (r) => {
      await r.arrayBuffer();
      if (r.status !== 200) throw new Error(`status ${r.status}`);
    },
  );

/** Per group: ms of CPU per second, and wake-ups per second. */
const perSecond = (a: CpuSample, b: CpuSample, ms: number) =>
  [...usageBetween(a, b)].map(([name, u]) => [name.replace(" (this process)", ""), (u.cpu * 1000 * 1000) / ms, (u.wakeups * 1000) / ms] as const);
/** Transactions committed or rolled back so far in each of the stack's databases (the counts of `pg_stat_database`). */
const transactions = async () => {
  const rows = await gateway.stack.sql<{ datname: string; n: string }>(
    "ledger",
    "SELECT datname, (xact_commit + xact_rollback)::text AS n FROM pg_stat_database WHERE datname = ANY($1)",
    [await gateway.databases()],
  );
  return rows.reduce((sum, r) => sum + Number(r.n), 0);
};

try {
  for (let i = 0; i < 50; i++) await request(); // warm up every path once
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
    await gateway.snapshotBackends();
    const txBefore = await transactions();
    const before = sampleCpu(gateway.groups());
    const started = Date.now();
    let sent = 0;
    while (Date.now() - started < seconds * 1000) {
      if (rate > 0) {
        await request();
        sent++;
        const due = started + (sent * 1000) / rate;
        if (due > Date.now()) await new Promise((r) => setTimeout(r, due - Date.now()));
      } else await new Promise((r) => setTimeout(r, seconds * 1000 - (Date.now() - started)));
    }
    await gateway.snapshotBackends(); // backends that started during the window count from zero
    const after = sampleCpu(gateway.groups());
    const ms = Date.now() - started;
    // Less the two statements this benchmark ran in the ledger's database (the snapshot of backends).
    const tx = (await transactions()) - txBefore - 2;
    const figures = perSecond(before, after, ms);
    const stack = figures.filter(([n]) => n !== "load generator");
    const total = stack.reduce((s, [, v]) => s + v, 0);
    const wakeups = stack.reduce((s, [, , w]) => s + w, 0);
    const sum = (prefix: string) => stack.filter(([n]) => n.startsWith(prefix)).reduce((s, [, v]) => s + v, 0);
    const node = stack.filter(([n]) => !/^(postgres|nats|redis)/.test(n)).reduce((s, [, v]) => s + v, 0);
    const perRequest = sent > 0 ? `, ${(total / (sent / (ms / 1000))).toFixed(2)} ms per request` : "";
    console.log(
      `${rate} req/s (${sent} sent), ${(ms / 1000).toFixed(0)} s: whole stack ${total.toFixed(1)} ms CPU per second${perRequest}` +
        ` (Node ${node.toFixed(1)}, PostgreSQL ${sum("postgres").toFixed(1)}, NATS ${sum("nats").toFixed(1)}, Redis ${sum("redis").toFixed(1)}; ` +
        `${wakeups.toFixed(1)} wake-ups and ${(tx / (ms / 1000)).toFixed(2)} PostgreSQL transactions per second)\n` +
        `    ms/s: ${figures.map(([n, v]) => `${n} ${v.toFixed(2)}`).join(" · ")}\n` +
        `    wake-ups/s: ${figures.map(([n, , w]) => `${n} ${w.toFixed(1)}`).join(" · ")}`,
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
    let previous = sampleCpu(gateway.groups());
    let at = Date.now();
    for (let t = afterBurstStep; t <= afterBurstSeconds; t += afterBurstStep) {
      await new Promise((r) => setTimeout(r, afterBurstStep * 1000));
      await gateway.snapshotBackends();
      const sample = sampleCpu(gateway.groups());
      const now = Date.now();
      const figures = perSecond(previous, sample, now - at).filter(([n]) => n !== "load generator");
      const total = figures.reduce((s, [, v]) => s + v, 0);
      const top = [...figures].sort((a, b) => b[1] - a[1]).slice(0, 6);
      console.log(
        `  ${t - afterBurstStep}–${t} s: whole stack ${total.toFixed(1)} ms CPU per second; most: ${top.map(([n, v, w]) => `${n} ${v.toFixed(2)} (${w.toFixed(0)} wake-ups/s)`).join(" · ")}`,
      );
      previous = sample;
      at = now;
    }
  }
} finally {
  await gateway.stop();
  await mock.stop();
}
