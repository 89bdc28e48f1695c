export { SpanKind, SpanStatusCode, type Context, type Link, type Span, type SpanContext, type TextMapGetter, type TextMapSetter } from "@opentelemetry/api";
export {
  activeContext,
  extractContext,
  failSpan,
  headerGetter,
  headerSetter,
  injectContext,
  inSpan,
  NOOP_SPAN,
  spanContextOf,
  startSpan,
  tracingEnabled,
  withContext,
  withSpan,
} from "./trace.js";
export { startTelemetry, type OtlpProtocol, type Telemetry, type TelemetryOptions } from "./start.js";
