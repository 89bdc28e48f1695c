import { afterEach, describe, expect, it } from "vitest";
import { Counter, createRegistry, startMetricsServer, type MetricsServer } from "./index.js";

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

  it("answers 404 elsewhere", async () => {
    server = await startMetricsServer(createRegistry("x"), 0, "127.0.0.1");
    expect((await fetch(`http://127.0.0.1:${server.port}/other`)).status).toBe(404);
  });
});
