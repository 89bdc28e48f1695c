import { context, diag, DiagLogLevel, isSpanContextValid, propagation, trace } from "@opentelemetry/api";
import { setLogContext } from "@gateway/logger";
import type { SpanExporter } from "@opentelemetry/sdk-trace";
import { setTracer } from "./trace.js";

export type OtlpProtocol = "http/protobuf" | "http/json";

export type TelemetryOptions = {
  /** The `service.name` resource attribute. */
  service: string;
  /** OTLP/HTTP base URL (`OTEL_EXPORTER_OTLP_ENDPOINT`); spans go to `<endpoint>/v1/traces`. Absent: tracing is off. */
  endpoint?: string;
  protocol?: OtlpProtocol;
  /** Longest wait before a batch of ended spans is exported (`OTEL_BSP_SCHEDULE_DELAY`). */
  scheduleDelayMs?: number;
  /** Where exporter failures are told (the SDK is silent otherwise). */
  logger?: { warn(fields: object, msg: string): void };
  /** Instead of OTLP: an exporter of the caller's, spans handed over one by one (tests). */
  exporter?: SpanExporter;
};

export type Telemetry = {
  enabled: boolean;
  /** Exports what ended and is still buffered, then turns tracing off. */
  shutdown(): Promise<void>;
};

const OFF: Telemetry = { enabled: false, shutdown: async () => undefined };

/**
 * Turns tracing on when an endpoint (or an exporter) is given: registers the
 * tracer provider, an AsyncLocalStorage context manager and the W3C trace-context
 * propagator as the API's globals. Without one it registers nothing and loads no
 * SDK module: the API's no-op implementation stays, and `startSpan` & co. return
 * at their first branch.
 */
export async function startTelemetry(options: TelemetryOptions): Promise<Telemetry> {
  if (!options.endpoint && !options.exporter) return OFF;
  const [
    { TracerProvider, BatchSpanProcessor, SimpleSpanProcessor },
    { AsyncLocalStorageContextManager },
    { W3CTraceContextPropagator },
    { resourceFromAttributes },
  ] = await Promise.all([
    import("@opentelemetry/sdk-trace"),
    import("@opentelemetry/context-async-hooks"),
    import("@opentelemetry/core"),
    import("@opentelemetry/resources"),
  ]);
  if (options.logger) {
    const logger = options.logger;
    const warn = (message: string) => logger.warn({ component: "telemetry" }, message);
    diag.setLogger({ error: warn, warn, info: () => undefined, debug: () => undefined, verbose: () => undefined }, DiagLogLevel.WARN);
  }
  const processor = options.exporter
    ? new SimpleSpanProcessor({ exporter: options.exporter })
    : new BatchSpanProcessor({
        exporter: await otlpExporter(options.endpoint!, options.protocol ?? "http/protobuf"),
        ...(options.scheduleDelayMs !== undefined ? { scheduledDelayMillis: options.scheduleDelayMs } : {}),
      });
  const provider = new TracerProvider({ resource: resourceFromAttributes({ "service.name": options.service }), spanProcessors: [processor] });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  trace.setGlobalTracerProvider(provider);
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  setTracer(provider.getTracer("@gateway/telemetry"));
  // Log lines written inside a span carry its ids, so logs and traces meet.
  setLogContext(() => {
    const span = trace.getActiveSpan()?.spanContext();
    return span && isSpanContextValid(span) ? { trace_id: span.traceId, span_id: span.spanId } : undefined;
  });
  return {
    enabled: true,
    async shutdown() {
      try {
        await provider.shutdown();
      } finally {
        setLogContext(undefined);
        setTracer(undefined);
        trace.disable();
        propagation.disable();
        context.disable();
        diag.disable();
      }
    },
  };
}

/** The OTLP/HTTP exporter for a protocol; other OTEL_EXPORTER_OTLP_* settings (headers, timeout, certificates) it reads itself. */
async function otlpExporter(endpoint: string, protocol: OtlpProtocol): Promise<SpanExporter> {
  const url = `${endpoint.replace(/\/+$/, "")}/v1/traces`;
  if (protocol === "http/json") {
    const { OTLPTraceExporter } = await import("@opentelemetry/exporter-trace-otlp-http");
    return new OTLPTraceExporter({ url });
  }
  const { OTLPTraceExporter } = await import("@opentelemetry/exporter-trace-otlp-proto");
  return new OTLPTraceExporter({ url });
}
