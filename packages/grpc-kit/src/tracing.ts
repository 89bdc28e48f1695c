import * as grpc from "@grpc/grpc-js";
import {
  extractContext,
  injectContext,
  NOOP_SPAN,
  SpanKind,
  SpanStatusCode,
  startSpan,
  tracingEnabled,
  withSpan,
  type Context,
  type Span,
  type TextMapGetter,
  type TextMapSetter,
} from "@gateway/telemetry";

/** W3C trace context in gRPC metadata (`traceparent`, `tracestate`). */
const metadataSetter: TextMapSetter<grpc.Metadata> = { set: (md, key, value) => md.set(key, value) };
const metadataGetter: TextMapGetter<grpc.Metadata> = {
  keys: (md) => Object.keys(md.getMap()),
  get: (md, key) => {
    const values = md.get(key);
    return values.length === 0 ? undefined : values.map(String);
  },
};

/** Server-side codes that mean the server failed (OpenTelemetry's gRPC conventions); the others are the caller's. */
const SERVER_ERRORS = new Set<number>([
  grpc.status.UNKNOWN,
  grpc.status.DEADLINE_EXCEEDED,
  grpc.status.UNIMPLEMENTED,
  grpc.status.INTERNAL,
  grpc.status.UNAVAILABLE,
  grpc.status.DATA_LOSS,
]);

function attributes(path: string) {
  const [, service, method] = path.split("/");
  return { "rpc.system": "grpc", "rpc.service": service ?? "", "rpc.method": method ?? "" };
}

/** A client span for a call, its context written into the call's metadata. */
export function startClientSpan(path: string, metadata: grpc.Metadata): Span {
  if (!tracingEnabled()) return NOOP_SPAN;
  const span = startSpan(path.slice(1), { kind: SpanKind.CLIENT, attributes: attributes(path) });
  withSpan(span, () => injectContext(metadata, metadataSetter));
  return span;
}

/** The caller's trace context, from the call's metadata. */
export function callerContext(metadata: grpc.Metadata): Context {
  return extractContext(metadata, metadataGetter);
}

/** A server span for a call, child of the caller's span when the metadata carries one. */
export function startServerSpan(path: string, metadata: grpc.Metadata, requestId: string): Span {
  if (!tracingEnabled()) return NOOP_SPAN;
  return startSpan(path.slice(1), { kind: SpanKind.SERVER, attributes: { ...attributes(path), "gateway.request_id": requestId } }, callerContext(metadata));
}

/** Ends a call's span with its gRPC status. */
export function endRpcSpan(span: Span, code: number, side: "client" | "server"): void {
  if (span === NOOP_SPAN) return;
  span.setAttribute("rpc.grpc.status_code", code);
  if (side === "client" ? code !== grpc.status.OK : SERVER_ERRORS.has(code)) {
    const name = grpc.status[code] ?? String(code);
    span.setAttribute("error.type", name);
    span.setStatus({ code: SpanStatusCode.ERROR, message: name });
  }
  span.end();
}

/** A client span for a call carried inside a long-lived stream, and its `traceparent` ("" when tracing is off). */
export function carriedClientSpan(path: string): { span: Span; traceparent: string } {
  if (!tracingEnabled()) return { span: NOOP_SPAN, traceparent: "" };
  const metadata = new grpc.Metadata();
  const span = startClientSpan(path, metadata);
  return { span, traceparent: String(metadata.get("traceparent")[0] ?? "") };
}

/** The server span of a call carried inside a long-lived stream, child of the caller's `traceparent`. */
export function carriedServerSpan(path: string, traceparent: string, requestId: string): Span {
  if (!tracingEnabled()) return NOOP_SPAN;
  const metadata = new grpc.Metadata();
  if (traceparent) metadata.set("traceparent", traceparent);
  return startServerSpan(path, metadata, requestId);
}
