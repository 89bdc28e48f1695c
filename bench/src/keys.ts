// Key verification cost: requests per second through an API-key-authenticated
// no-op route (GET /v1/key: hash, cache, one Redis round trip with the version
// check and every limit, lease release) against an unauthenticated one
// (GET /health/live), on the same edge, in one run, alternating A B B A.
//   pnpm --filter @gateway/bench keys        writes docs/benchmarks/keys.md
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { call, newTenant, REPO_ROOT, startStack } from "@gateway/testkit";
import { alternate, load, mean, type LoadResult } from "./load.js";
import { machine } from "./machine.js";

/** Runs the comparison and returns its report (markdown). */
export async function measureKeys(DURATION: number): Promise<string> {
  const stack = await startStack({ services: [], env: { edge: { LOG_LEVEL: "warn" } } });
  try {
    const tenant = await newTenant(stack.edgeUrl, "bench");
    const limited = await call(stack.edgeUrl, "POST", "/console/keys", {
      token: tenant.token,
      body: { name: "bench, every limit", scopes: ["*"], daily_quota: 1_000_000_000, rate_limit_per_minute: 1_000_000, concurrency_limit: 10_000 },
    });
    const plain = await call(stack.edgeUrl, "POST", "/console/keys", { token: tenant.token, body: { name: "bench, no limits", scopes: ["*"] } });
    const url = (path: string) => `${stack.edgeUrl}${path}`;
    // Warm-up: JIT, connection pools, the key cache.
    await load({ label: "warm-up", url: url("/v1/key"), connections: 8, durationSeconds: 2, headers: { "X-API-Key": limited.body.data.key } });

    const rows: string[] = [];
    for (const connections of [1, 32]) {
      const open = () => load({ label: "unauthenticated", url: url("/health/live"), connections, durationSeconds: DURATION });
      const keyed = (key: string, label: string) => () =>
        load({ label, url: url("/v1/key"), connections, durationSeconds: DURATION, headers: { "X-API-Key": key } });
      const vsPlain = await alternate(open, keyed(plain.body.data.key, "API key, no limits"));
      const vsLimited = await alternate(open, keyed(limited.body.data.key, "API key, quota + rate + concurrency"));
      const baseline = [...vsPlain.a, ...vsLimited.a];
      const line = (label: string, results: LoadResult[]) => {
        const rps = mean(results, "requestsPerSecond");
        const errors = results.reduce((s, r) => s + r.errors + r.non2xx, 0);
        const perRequestUs = (connections / rps) * 1e6;
        return `| ${connections} | ${label} | ${Math.round(rps)} | ${Math.round(perRequestUs)} | ${mean(results, "p50").toFixed(1)} | ${mean(results, "p99").toFixed(1)} | ${(rps / mean(baseline, "requestsPerSecond")).toFixed(2)} | ${errors} |`;
      };
      rows.push(
        line("unauthenticated (`/health/live`)", baseline),
        line("API key, no limits (`/v1/key`)", vsPlain.b),
        line("API key, quota + rate + concurrency (`/v1/key`)", vsLimited.b),
      );
    }
    const report = `### Benchmark: API key verification

How much an API key costs on the hot path: requests per second through an
authenticated no-op route (\`GET /v1/key\`: SHA-256 of the key, in-memory key
cache, one Redis round trip that checks the key's version and applies every
limit, and the concurrency lease's release) against an unauthenticated no-op
route (\`GET /health/live\`), on the same edge process, in one run. Targets
alternate A B B A (${DURATION} s each, after a warm-up); figures are means of the two runs.
µs/request = connections ÷ req/s (at 1 connection: the full time of one request,
finer than autocannon's millisecond percentiles). p50/p99 in ms. Ratio: throughput
relative to the unauthenticated route.

Command: \`pnpm --filter @gateway/bench keys\` (BENCH_SECONDS=${DURATION})
Machine: ${machine()}
Edge LOG_LEVEL=warn (the access log line costs the same on both routes); one edge process,
the load generator (autocannon) on the same 2 cores.

| Connections | Route | req/s | µs/request | p50 | p99 | ratio | errors + non-2xx |
| --- | --- | --- | --- | --- | --- | --- | --- |
${rows.join("\n")}
`;
    return report;
  } finally {
    await stack.shutdown();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href && (process.argv.includes("--help") || process.argv.includes("-h"))) {
  console.log(`Usage: pnpm --filter @gateway/bench keys

Measures API key verification on the real stack and rewrites docs/benchmarks/keys.md.
Environment: BENCH_SECONDS (default 8).`);
  process.exit(0);
}
if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const report = await measureKeys(Number(process.env.BENCH_SECONDS ?? 8));
  writeFileSync(join(REPO_ROOT, "docs", "benchmarks", "keys.md"), report);
  console.log(report);
}
