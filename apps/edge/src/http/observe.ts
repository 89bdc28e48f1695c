import type { NextFunction, Request, Response } from "express";
import type { Logger } from "@gateway/logger";
import { Histogram, LATENCY_BUCKETS, type Registry } from "@gateway/metrics";

/** Request metrics and one access-log line per request (path without query, never bodies or headers). */
export function observe(registry: Registry, logger: Logger) {
  const duration = new Histogram({
    name: "http_request_duration_seconds",
    help: "Time to answer an HTTP request, by method, route and status.",
    labelNames: ["method", "route", "status"],
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  });
  const log = logger.child({ component: "http" });
  return (req: Request, res: Response, next: NextFunction) => {
    const started = process.hrtime.bigint();
    res.once("close", () => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const route = (req.route as { path?: string } | undefined)?.path ?? "unmatched";
      duration.observe({ method: req.method, route, status: String(res.statusCode) }, seconds);
      log.info(
        {
          request_id: req.requestId,
          method: req.method,
          path: req.path,
          status: res.statusCode,
          duration_ms: Math.round(seconds * 1e4) / 10,
          ...(res.writableFinished ? {} : { aborted: true }),
        },
        "request",
      );
    });
    next();
  };
}
