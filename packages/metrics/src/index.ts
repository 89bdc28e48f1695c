import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import { EVENT_LOOP_GAUGES, sampleEventLoopDelay } from "./event-loop.js";

export { Counter, Gauge, Histogram, Registry };
export { EVENT_LOOP_SAMPLER_DEFAULTS, sampleEventLoopDelay, type EventLoopSamplerOptions } from "./event-loop.js";

/** Latency buckets in seconds, fine at the low end where a gateway lives. */
export const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** Buckets for items per batch (group commit). */
export const BATCH_BUCKETS = [1, 2, 4, 8, 16, 32, 64, 128, 256];

/**
 * prom-client's own event-loop delay monitor (`monitorEventLoopDelay`) wakes a process at a
 * fixed interval, busy or idle: 100 times a second by default (3.6 ms of CPU per second per
 * process, docs/decisions/0168), once a second at 0168's setting, still the largest part of
 * an idle process's wake-ups (docs/decisions/0200). Its timer is set to the longest interval
 * Node accepts (it never fires in practice) and its gauges are replaced by
 * `sampleEventLoopDelay`'s, which sample once a second while the loop works and back off to
 * once a minute while it idles.
 */
const PROM_CLIENT_MONITOR_MS = 2 ** 31 - 1;

/** A registry with process metrics and a `service` label on every series. */
export function createRegistry(service: string): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: PROM_CLIENT_MONITOR_MS });
  for (const name of EVENT_LOOP_GAUGES) registry.removeSingleMetric(name);
  sampleEventLoopDelay(registry);
  return registry;
}

export type MetricsServer = { port: number; close(): Promise<void> };

/** Serves `GET /metrics` in Prometheus text format; anything else is 404. */
export async function startMetricsServer(registry: Registry, port: number, host: string): Promise<MetricsServer> {
  const server: Server = createServer((req, res) => {
    if (req.method === "GET" && req.url?.split("?")[0] === "/metrics") {
      registry.metrics().then(
        (text) => {
          res.writeHead(200, { "content-type": registry.contentType });
          res.end(text);
        },
        () => {
          res.writeHead(500, { "content-type": "text/plain" });
          res.end("metrics unavailable\n");
        },
      );
      return;
    }
    res.writeHead(404, { "content-type": "text/plain" });
    res.end("not found\n");
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
export { SeriesCounter, type Series } from "./series-counter.js";
