import { InMemorySpanExporter, type ReadableSpan } from "@opentelemetry/sdk-trace";
import { startTelemetry } from "./start.js";

export type { ReadableSpan };

/** Tracing on, spans kept in memory as they end (for tests of code that makes spans). */
export async function recordSpans(service = "test"): Promise<{ spans(): ReadableSpan[]; reset(): void; stop(): Promise<void> }> {
  const exporter = new InMemorySpanExporter();
  const telemetry = await startTelemetry({ service, exporter });
  return {
    spans: () => exporter.getFinishedSpans(),
    reset: () => exporter.reset(),
    stop: () => telemetry.shutdown(),
  };
}
