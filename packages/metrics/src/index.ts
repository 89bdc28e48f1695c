import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";

export { Counter, Gauge, Histogram, Registry };

/** Latency buckets in seconds, fine at the low end where a gateway lives. */
export const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** Buckets for items per batch (group commit). */
export const BATCH_BUCKETS = [1, 2, 4, 8, 16, 32, 64, 128, 256];

/**
 * How often the event-loop delay histogram (nodejs_eventloop_lag_p50 … p99) samples. prom-client's
 * default, 10 ms, wakes an idle process 100 times a second and cost about 3.6 ms of CPU per
 * second per process here, most of an idle stack's CPU; once a second costs nothing
 * measurable and still records any stall that outlasts a second (the scrape-time
 * nodejs_eventloop_lag_seconds probe is unchanged).
 */
export const EVENT_LOOP_SAMPLE_MS = 1_000;

/** A registry with process metrics and a `service` label on every series. */
export function createRegistry(service: string): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS });
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
