// This gateway alone, for optimization work: metered JSON and stream at 1 and 32
// connections, CPU per process, and the accounting audit of every run. Each figure
// is the mean of QUICK_ROUNDS runs (default 2). Not the benchmark of record (pnpm bench).
//   pnpm --filter @gateway/bench quick [json|stream|both]
import { meanCpu, measure, runOk, type Measured, type Mode, type Target } from "./compare.js";
import { startGateway } from "./gateway.js";
import { startMock } from "./targets.js";

if (process.argv.includes("--help") || process.argv.includes("-h")) {
  console.log(`Usage: pnpm --filter @gateway/bench quick [json|stream]

This gateway alone (metered JSON and/or stream at 1 and 32 connections, CPU per
process, an accounting audit of every run); prints the figures, writes no file.
Environment: QUICK_ROUNDS (default 2), BENCH_SECONDS (default 8), BENCH_APPS_ROOT.`);
  process.exit(0);
}
const modes: Mode[] = process.argv[2] === "json" || process.argv[2] === "stream" ? [process.argv[2]] : ["json", "stream"];
const rounds = Number(process.env.QUICK_ROUNDS ?? 2);
const mock = await startMock("k");
const gateway = await startGateway(mock.url, "k");
const target: Target = {
  name: "gateway",
  url: `${gateway.url}/v1/apps/ai/bench/v1/chat/completions`,
  headers: { "x-api-key": gateway.key },
  groups: gateway.groups(),
};
let failed = false;
try {
  for (const mode of modes) {
    for (const connections of [1, 32]) {
      await measure(target, mode, connections, connections === 1 ? 200 : 1_000, gateway, () => "bench-small");
      const runs: Measured[] = [];
      for (let i = 0; i < rounds; i++) runs.push(await measure(target, mode, connections, connections === 1 ? 400 : 3_000, gateway, () => "bench-small"));
      const mean = (f: (r: Measured) => number) => runs.reduce((s, r) => s + f(r), 0) / runs.length;
      const byProcess = meanCpu(runs);
      const cpu = [...byProcess].map(([k, v]) => `${k.replace(" (this process)", "")} ${v.toFixed(2)}`).join(" · ");
      const ok = runs.every(runOk);
      failed ||= !ok;
      console.log(
        `${mode} c=${connections}: ${mean((r) => r.requestsPerSecond).toFixed(0)} req/s, ${mean((r) => (connections / r.requestsPerSecond) * 1000).toFixed(2)} ms/request, p50 ${mean((r) => r.p50).toFixed(2)} p99 ${mean((r) => r.p99).toFixed(2)}, ` +
          `CPU ${[...byProcess.values()].reduce((a, b) => a + b, 0).toFixed(2)} ms/req, ledger calls ${mean((r) => r.audit?.ledgerCallsPerRequest ?? 0).toFixed(3)}/req, accounting ${ok ? "ok" : "FAILED"}\n    ${cpu}`,
      );
    }
  }
  // Items per group-committed call over the whole run (builds without the metric print nothing).
  const sizes: string[] = [];
  for (const service of ["ledger", "managed-ai"] as const) {
    const text = await fetch(gateway.stack.metricsUrl(service)).then(
      (r) => r.text(),
      () => "",
    );
    const sums = new Map<string, { sum: number; count: number }>();
    for (const m of text.matchAll(/^(ledger_movement_batch_size|managed_ai_batch_size)_(sum|count)\{([^}]*)\} (\S+)$/gm)) {
      const queue = /queue="([^"]+)"/.exec(m[3]!)?.[1] ?? "movements";
      const entry = sums.get(queue) ?? { sum: 0, count: 0 };
      entry[m[2] as "sum" | "count"] += Number(m[4]);
      sums.set(queue, entry);
    }
    for (const [queue, { sum, count }] of sums) if (count > 0) sizes.push(`${service} ${queue} ${(sum / count).toFixed(2)}`);
  }
  if (sizes.length > 0) console.log(`mean items per batch: ${sizes.join(" · ")}`);
} finally {
  await gateway.stop();
  await mock.stop();
}
process.exit(failed ? 1 : 0);
