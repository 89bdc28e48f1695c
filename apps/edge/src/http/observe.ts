import type { NextFunction, Request, Response } from "express";
import type { Logger } from "@gateway/logger";
import { Histogram, LATENCY_BUCKETS, type Registry } from "@gateway/metrics";

/** Path parameters that are bearer secrets (a file's download and share tokens): never logged. */
const SECRET_PARAMS = ["token"];

/** The request's path with the values of secret parameters replaced, for the access log. */
export function loggedPath(req: Pick<Request, "path" | "params">): string {
  const secrets = SECRET_PARAMS.map((name) => req.params?.[name]).filter((v): v is string => typeof v === "string" && v.length > 0);
  if (secrets.length === 0) return req.path;
  return req.path
    .split("/")
    .map((segment) => {
      let decoded = segment;
      try {
        decoded = decodeURIComponent(segment);
      } catch {
        // a malformed escape is logged as sent
      }
      return secrets.includes(decoded) ? "[redacted]" : segment;
    })
    .join("/");
}

/** Request metrics and one access-log line per request (path without query, never bodies or headers, secret path parameters redacted). */
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
          path: loggedPath(req),
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
