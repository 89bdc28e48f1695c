// CPU per metered call of the operations metrics (docs/decisions/0211): what AiMetrics adds
// to a call (the request context's entry, the model, the provider's time, the settlement's
// counters, the overhead histogram), against prom-client's own labelled counters doing the
// same counts, and against nothing. Run after the build:
//   node apps/managed-ai/bench/metrics-cpu.mjs [calls per round, default 200000]
// Rounds alternate A B C C B A; figures are µs of CPU per call (process.cpuUsage).
import { runWithContext } from "@gateway/logger";
import { Counter, createRegistry, Histogram, LATENCY_BUCKETS } from "@gateway/metrics";
import { AiMetrics } from "../dist/metrics/ai-metrics.js";

const calls = Number(process.argv[2] ?? 200_000);
const tenants = Array.from({ length: 100 }, (_, i) => `ten_${String(i).padStart(26, "0")}`);
const models = ["small", "large", "embed"];
const done = Promise.resolve("answer");

const ai = new AiMetrics(createRegistry("bench"), { tenantLabel: true });
async function withMetrics(i) {
  const tenantId = tenants[i % tenants.length];
  const model = models[i % models.length];
  await runWithContext({ requestId: `req_${i}` }, () =>
    ai.track(async () => {
      ai.planned(model);
      const provider = ai.providerCall();
      provider?.(1.5);
      ai.settled({ tenantId, model, chargedUnits: 123n, inputTokens: 40n, outputTokens: 12n });
      return done;
    }),
  );
}

const registry = createRegistry("bench-prom");
const requests = new Counter({ name: "r_total", help: "r", labelNames: ["model", "status"], registers: [registry] });
const spend = new Counter({ name: "s_total", help: "s", labelNames: ["tenant", "model"], registers: [registry] });
const tokens = new Counter({ name: "t_total", help: "t", labelNames: ["tenant", "model", "kind"], registers: [registry] });
const overhead = new Histogram({ name: "o_seconds", help: "o", buckets: LATENCY_BUCKETS, registers: [registry] });
async function withPromClient(i) {
  const tenant = tenants[i % tenants.length];
  const model = models[i % models.length];
  await runWithContext({ requestId: `req_${i}` }, async () => {
    const start = performance.now();
    await done;
    spend.inc({ tenant, model }, 123);
    tokens.inc({ tenant, model, kind: "input" }, 40);
    tokens.inc({ tenant, model, kind: "output" }, 12);
    requests.inc({ model, status: "200" });
    overhead.observe((performance.now() - start) / 1000);
  });
}

async function without(i) {
  await runWithContext({ requestId: `req_${i}` }, async () => done);
}

async function round(fn) {
  const before = process.cpuUsage();
  for (let i = 0; i < calls; i++) await fn(i);
  const used = process.cpuUsage(before);
  return (used.user + used.system) / calls;
}

const targets = { none: without, "AiMetrics (SeriesCounter)": withMetrics, "prom-client labels": withPromClient };
for (const fn of Object.values(targets)) await round(fn); // warm-up
const names = Object.keys(targets);
const order = [...names, ...[...names].reverse()];
const sums = Object.fromEntries(names.map((n) => [n, 0]));
for (const name of order) sums[name] += await round(targets[name]);
console.log(`µs of CPU per call, mean of two rounds of ${calls} calls (A B C C B A):`);
for (const name of names) console.log(`  ${name.padEnd(28)} ${(sums[name] / 2).toFixed(3)}`);
console.log(`  AiMetrics adds ${((sums["AiMetrics (SeriesCounter)"] - sums.none) / 2).toFixed(3)} µs per call over none`);
