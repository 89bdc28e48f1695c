// CPU that the stack spends per second with no request at all, and at a paced low rate:
// the work done per unit of time or per wake-up rather than per request (timers, polls,
// lingers, GC of an idle heap). Prints ms of CPU per second for every process.
//   pnpm --filter @gateway/bench idle
import { sampleCpu, type CpuSample } from "./cpu.js";
import { body } from "./compare.js";
import { startGateway } from "./gateway.js";
import { startMock } from "./targets.js";

if (process.argv.includes("--help") || process.argv.includes("-h")) {
  console.log(`Usage: pnpm --filter @gateway/bench idle

Starts the stack as the benchmark does, then measures the CPU of every process
(ms per second) while idle and while paced at IDLE_RATES requests per second
(default "0,10,50"; one connection, metered JSON). Prints the figures, writes no file.
Environment: IDLE_SECONDS (default 10), IDLE_RATES, BENCH_ENV, SERVICE_NODE_ARGS.`);
  process.exit(0);
}

const seconds = Number(process.env.IDLE_SECONDS ?? 10);
const rates = (process.env.IDLE_RATES ?? "0,10,50").split(",").map(Number);
const mock = await startMock("k");
const gateway = await startGateway(mock.url, "k");
const url = `${gateway.url}/v1/apps/ai/bench/v1/chat/completions`;
const request = () =>
  fetch(url, { method: "POST", headers: { "x-api-key": gateway.key, "content-type": "application/json" }, body: body("json", "bench-small") }).then(async (r) => {
    await r.arrayBuffer();
    if (r.status !== 200) throw new Error(`status ${r.status}`);
  });

const perSecond = (a: CpuSample, b: CpuSample, ms: number) => [...a].map(([name, v]) => [name.replace(" (this process)", ""), (((b.get(name) ?? v) - v) * 1000 * 1000) / ms] as const);

try {
  for (let i = 0; i < 50; i++) await request(); // warm up every path once
  await gateway.snapshotBackends();
  for (const rate of rates) {
    await new Promise((r) => setTimeout(r, 2_000));
    const before = sampleCpu(gateway.groups());
    const started = Date.now();
    let sent = 0;
    while (Date.now() - started < seconds * 1000) {
      if (rate > 0) {
        await request();
        sent++;
        const due = started + (sent * 1000) / rate;
        if (due > Date.now()) await new Promise((r) => setTimeout(r, due - Date.now()));
      } else await new Promise((r) => setTimeout(r, 100));
    }
    const ms = Date.now() - started;
    const figures = perSecond(before, sampleCpu(gateway.groups()), ms);
    const total = figures.filter(([n]) => n !== "load generator").reduce((s, [, v]) => s + v, 0);
    const perRequest = sent > 0 ? `, ${(total / (sent / (ms / 1000))).toFixed(2)} ms per request` : "";
    console.log(`${rate} req/s (${sent} sent): ${total.toFixed(1)} ms CPU per second${perRequest}\n    ${figures.map(([n, v]) => `${n} ${v.toFixed(1)}`).join(" · ")}`);
  }
} finally {
  await gateway.stop();
  await mock.stop();
}
