import type { NextFunction, Request, Response } from "express";
import type { Logger } from "@gateway/logger";
import { Histogram, LATENCY_BUCKETS, type Registry } from "@gateway/metrics";

/** Path parameters that are bearer secrets (a file's download and share tokens): never logged. */
const SECRET_PARAMS = new Set(["token"]);

/** A request path as it may be logged: secret path segments replaced. */
export type PathRedactor = (path: string) => string;

type SecretPattern = { segments: string[]; secret: boolean[] };

function segmentsOf(path: string): string[] {
  const segments = path.split("/");
  // Routing ignores a trailing slash; so does the comparison.
  while (segments.length > 1 && segments.at(-1) === "") segments.pop();
  return segments;
}

/**
 * Redaction from the route definitions, not from `req.params`: the router resets
 * `req.params` when a handler passes an error on, so a path logged by the error
 * handler or at the end of the request would carry the token whenever the
 * answer is an error. Each pattern with a secret parameter (`:token`) is
 * compared with the path segment by segment (literals case-insensitively, as
 * routing does); where it fits, the secret segments are replaced.
 */
export function pathRedactor(patterns: string[]): PathRedactor {
  const secretPatterns: SecretPattern[] = patterns
    .map((pattern) => {
      const segments = segmentsOf(pattern);
      return { segments: segments.map((s) => s.toLowerCase()), secret: segments.map((s) => s.startsWith(":") && SECRET_PARAMS.has(s.slice(1))) };
    })
    .filter((p) => p.secret.some(Boolean));
  return (path) => {
    const segments = segmentsOf(path);
    for (const pattern of secretPatterns) {
      if (pattern.segments.length !== segments.length) continue;
      const fits = pattern.segments.every((s, i) => (s.startsWith(":") ? segments[i]!.length > 0 : s === segments[i]!.toLowerCase()));
      if (fits) return segments.map((s, i) => (pattern.secret[i] ? "[redacted]" : s)).join("/");
    }
    return path;
  };
}

/** Request metrics and one access-log line per request (path without query, never bodies or headers, secret path segments redacted). */
export function observe(registry: Registry, logger: Logger, redact: PathRedactor) {
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
    // Read now: at this point the path is the whole path, before any router changes it.
    const path = req.path;
    res.once("close", () => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const route = (req.route as { path?: string } | undefined)?.path ?? "unmatched";
      duration.observe({ method: req.method, route, status: String(res.statusCode) }, seconds);
      // The line's fields (the redaction walks the path's segments) only when it is written.
      if (!log.isLevelEnabled("info")) return;
      log.info(
        {
          request_id: req.requestId,
          method: req.method,
          path: redact(path),
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
