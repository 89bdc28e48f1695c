import { afterEach, describe, expect, it } from "vitest";
import { Counter, createRegistry, Registry, sampleEventLoopDelay, startMetricsServer, type MetricsServer } from "./index.js";

let server: MetricsServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe("metrics endpoint", () => {
  it("serves the registry in Prometheus text format with the service label", async () => {
    const registry = createRegistry("ledger");
    const counter = new Counter({ name: "test_things_total", help: "things", registers: [registry] });
    counter.inc(3);
    server = await startMetricsServer(registry, 0, "127.0.0.1");
    const res = await fetch(`http://127.0.0.1:${server.port}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/plain");
    const text = await res.text();
    expect(text).toContain('test_things_total{service="ledger"} 3');
    expect(text).toContain("process_cpu_user_seconds_total");
  });

  it("answers the probes: live while the loop runs, ready from the service's answer (503 until it has one)", async () => {
    const probes: { ready?: () => Promise<boolean> } = {};
    server = await startMetricsServer(createRegistry("x"), 0, "127.0.0.1", probes);
    const get = (path: string) => fetch(`http://127.0.0.1:${server!.port}${path}`).then((r) => r.status);
    expect(await get("/health/live")).toBe(200);
    expect(await get("/health/ready")).toBe(503);
    let ready = true;
    probes.ready = async () => ready;
    expect(await get("/health/ready")).toBe(200);
    ready = false;
    expect(await get("/health/ready")).toBe(503);
    probes.ready = () => Promise.reject(new Error("no answer"));
    expect(await get("/health/ready")).toBe(503);
  });

  it("answers 404 elsewhere", async () => {
    server = await startMetricsServer(createRegistry("x"), 0, "127.0.0.1");
    expect((await fetch(`http://127.0.0.1:${server.port}/other`)).status).toBe(404);
  });
});

describe("event-loop delay", () => {
  it("samples at the busy interval while the loop works and backs off while it idles", async () => {
    const registry = new Registry();
    const sampler = sampleEventLoopDelay(registry, { busyMs: 20, idleMaxMs: 160, busyUtilization: 0.05 });
    try {
      await new Promise((r) => setTimeout(r, 700)); // idle: 20, 40, 80, 160, 160 ...
      expect(sampler.interval()).toBe(160);
      const until = Date.now() + 400;
      while (Date.now() < until) await new Promise((r) => setImmediate(r)); // busy
      expect(sampler.interval()).toBe(20);
    } finally {
      sampler.stop();
    }
  });

  it("records a stall as the lateness of the next sample, once, then reads 0 with no sample", async () => {
    const registry = new Registry();
    const sampler = sampleEventLoopDelay(registry, { busyMs: 50, idleMaxMs: 50, busyUtilization: 1 });
    try {
      await new Promise((r) => setTimeout(r, 10));
      const until = Date.now() + 300;
      while (Date.now() < until); // a 300 ms stall
      await new Promise((r) => setTimeout(r, 20));
      sampler.stop();
      const max = (text: string) => Number(/^nodejs_eventloop_lag_max_seconds (\S+)$/m.exec(text)?.[1]);
      expect(max(await registry.metrics())).toBeGreaterThan(0.2);
      expect(max(await registry.metrics())).toBe(0); // the scrape cleared it, and no sample since
    } finally {
      sampler.stop();
    }
  });

  it("replaces prom-client's monitor: the same gauge names, once each", async () => {
    const text = await createRegistry("x").metrics();
    for (const name of ["nodejs_eventloop_lag_p99_seconds", "nodejs_eventloop_lag_seconds", "nodejs_heap_size_used_bytes"])
      expect(text.split("\n").filter((l) => l.startsWith(`# TYPE ${name} `))).toHaveLength(1);
  });
});
