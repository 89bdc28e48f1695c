/**
 * What tracing costs per gRPC call (docs/decisions/0163): N unary echo calls
 * through grpc-kit (client and server in one process, 16 in flight), CPU time
 * of that process per call, with tracing off (no endpoint: the API's no-op
 * path) and on (OTLP/HTTP protobuf, batched, to a collector in the parent
 * process, whose CPU is not counted). Each mode runs in its own process.
 * Also: the off path of the span helpers alone, in ns per call.
 *
 *   pnpm --filter @gateway/bench exec tsx src/otel-overhead.ts [calls]
 */
import { spawn } from "node:child_process";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { createClient, GrpcServer } from "@gateway/grpc-kit";
import type { AnyContract } from "@gateway/protos";
import { createLogger } from "@gateway/logger";
import { createRegistry } from "@gateway/metrics";
import { headerSetter, injectContext, startSpan, startTelemetry, withSpan } from "@gateway/telemetry";

const [mode, endpoint] = process.argv.slice(2);
const calls = Number(process.env.CALLS ?? 20_000);

if (mode === "off" || mode === "on") {
  // grpc-kit's test contract (outside this package, not exported: loaded by path).
  const echoPath = new URL("../../packages/grpc-kit/src/testdata/echo.ts", import.meta.url).href;
  const { echoContract } = (await import(echoPath)) as { echoContract: AnyContract };
  const telemetry = await startTelemetry({
    service: "bench",
    endpoint: mode === "on" ? endpoint : undefined,
    protocol: "http/protobuf",
    scheduleDelayMs: 1_000,
  });
  const registry = createRegistry("bench");
  const serviceToken = "bench-service-token-0123456789abcdef-0123";
  const server = new GrpcServer({ logger: createLogger({ service: "bench", level: "silent" }), registry, serviceToken });
  server.add(echoContract, {
    Say: async (req: { text: string }, ctx: { requestId: string }) => ({ text: req.text, request_id: ctx.requestId }),
    Count: async () => undefined,
    Collect: async () => ({ text: "", request_id: "" }),
  } as never);
  const port = await server.listen("127.0.0.1", 0);
  const client = createClient(echoContract, `127.0.0.1:${port}`, { deadlineMs: 5_000, registry, serviceToken }) as unknown as {
    Say(req: { text: string }): Promise<unknown>;
    close(): void;
  };
  const run = async (n: number) => {
    let next = 0;
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (next++ < n) await client.Say({ text: "hello" });
      }),
    );
  };
  await run(3_000); // warm-up: JIT, connections
  const cpu = process.cpuUsage();
  const started = process.hrtime.bigint();
  await run(calls);
  const used = process.cpuUsage(cpu);
  const wall = Number(process.hrtime.bigint() - started) / 1e9;
  await telemetry.shutdown(); // exports the rest (not counted)
  client.close();
  await server.shutdown(1_000);
  console.log(JSON.stringify({ cpuUsPerCall: (used.user + used.system) / calls, callsPerSecond: calls / wall }));
  process.exit(0);
}

// The off path alone: what every instrumented call site pays when no endpoint is set.
function offPathNs(): number {
  const n = 5_000_000;
  const headers: Record<string, string> = {};
  let sink = 0;
  const t = process.hrtime.bigint();
  for (let i = 0; i < n; i++) {
    const span = startSpan("x");
    withSpan(span, () => injectContext(headers, headerSetter));
    span.end();
    sink += i;
  }
  return sink >= 0 ? Number(process.hrtime.bigint() - t) / n : 0;
}

const received = { requests: 0, bytes: 0 };
const collector = createServer((req, res) => {
  received.requests++;
  req.on("data", (c: Buffer) => (received.bytes += c.length));
  req.on("end", () => res.writeHead(200, { "content-type": "application/x-protobuf" }).end());
});
await new Promise<void>((r) => collector.listen(0, "127.0.0.1", r));
const url = `http://127.0.0.1:${(collector.address() as AddressInfo).port}`;
const self = fileURLToPath(import.meta.url);

/** Runs a mode in a child process; the collector here keeps answering meanwhile. */
async function child(m: "off" | "on"): Promise<{ cpuUsPerCall: number; callsPerSecond: number }> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [...process.execArgv, self, m, url], {
      env: { ...process.env, CALLS: String(calls) },
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    p.stdout.on("data", (c: Buffer) => (out += c));
    p.on("exit", (code) => (code === 0 ? resolve(JSON.parse(out.trim().split("\n").at(-1)!)) : reject(new Error(`${m} exited ${code}`))));
  });
}

const rows: Record<"off" | "on", number[]> = { off: [], on: [] };
const rates: Record<"off" | "on", number[]> = { off: [], on: [] };
for (let round = 0; round < 3; round++) {
  for (const m of ["off", "on"] as const) {
    const r = await child(m);
    rows[m].push(r.cpuUsPerCall);
    rates[m].push(r.callsPerSecond);
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
console.log(`gRPC unary echo, ${calls} calls per run, 16 in flight, 3 runs per mode (median; all runs):`);
for (const m of ["off", "on"] as const) {
  console.log(
    `  tracing ${m.padEnd(3)}: ${median(rows[m]).toFixed(1)} µs CPU per call (${rows[m].map((x) => x.toFixed(1)).join(", ")}); ${Math.round(median(rates[m]))} calls/s`,
  );
}
console.log(
  `  on − off: ${(median(rows.on) - median(rows.off)).toFixed(1)} µs CPU per call (2 spans per call: client and server); collector got ${received.requests} requests, ${received.bytes} bytes`,
);
console.log(`off path of the span helpers alone (startSpan + withSpan + injectContext + end): ${offPathNs().toFixed(1)} ns per call`);
collector.close();
