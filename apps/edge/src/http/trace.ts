import type { Request, Response } from "express";
import { extractContext, headerGetter, NOOP_SPAN, SpanKind, SpanStatusCode, startSpan, tracingEnabled, type Span } from "@gateway/telemetry";

/**
 * One server span per HTTP request, continuing the caller's W3C trace context
 * (`traceparent`, `tracestate`) when it sends one. Named after the matched route
 * (`POST /v1/apps/ai/:alias/v1/chat/completions`), known once the request ends;
 * never the raw path, query, headers or body. 5xx answers mark it failed.
 */
export function startRequestSpan(req: Request, res: Response, requestId: string): Span {
  if (!tracingEnabled()) return NOOP_SPAN;
  const span = startSpan(
    req.method,
    { kind: SpanKind.SERVER, attributes: { "http.request.method": req.method, "gateway.request_id": requestId } },
    extractContext(req.headers, headerGetter),
  );
  res.once("close", () => {
    const route = (req.route as { path?: string } | undefined)?.path;
    if (route) {
      span.updateName(`${req.method} ${route}`);
      span.setAttribute("http.route", route);
    }
    span.setAttribute("http.response.status_code", res.statusCode);
    if (res.statusCode >= 500) {
      span.setAttribute("error.type", String(res.statusCode));
      span.setStatus({ code: SpanStatusCode.ERROR, message: String(res.statusCode) });
    }
    if (!res.writableFinished) span.setAttribute("gateway.aborted", true);
    span.end();
  });
  return span;
}
