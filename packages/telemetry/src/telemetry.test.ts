import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { Writable } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { createLogger } from "@gateway/logger";
import {
  extractContext,
  headerGetter,
  headerSetter,
  injectContext,
  inSpan,
  NOOP_SPAN,
  spanContextOf,
  SpanKind,
  startSpan,
  startTelemetry,
  tracingEnabled,
  withSpan,
  type Telemetry,
} from "./index.js";
import { recordSpans } from "./testing.js";

const API_GLOBAL = Symbol.for("opentelemetry.js.api.1");
let stop: (() => Promise<void>) | undefined;
afterEach(async () => {
  await stop?.();
  stop = undefined;
});

describe("tracing off (no endpoint)", () => {
  it("registers nothing with the API and hands out the no-op span", async () => {
    const telemetry = await startTelemetry({ service: "off" });
    expect(telemetry.enabled).toBe(false);
    expect(tracingEnabled()).toBe(false);
    expect((globalThis as Record<symbol, unknown>)[API_GLOBAL]).toBeUndefined();
    const span = startSpan("anything", { kind: SpanKind.SERVER });
    expect(span).toBe(NOOP_SPAN);
    expect(span.isRecording()).toBe(false);
    expect(await inSpan("x", {}, async (s) => s)).toBe(NOOP_SPAN);
    const headers: Record<string, string> = {};
    withSpan(span, () => injectContext(headers, headerSetter));
    expect(headers).toEqual({});
    const ctx = extractContext({ traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01" }, headerGetter);
    expect(spanContextOf(ctx)).toBeUndefined();
    await telemetry.shutdown();
  });
});

describe("log lines and traces", () => {
  it("carry the active span's trace and span ids while tracing is on, and nothing when it is off", async () => {
    const lines: Record<string, unknown>[] = [];
    const destination = new Writable({
      write(chunk: Buffer, _enc, done) {
        for (const line of chunk.toString().split("\n").filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
        done();
      },
    });
    const logger = createLogger({ service: "t", destination });
    const recorder = await recordSpans();
    const span = startSpan("work", { kind: SpanKind.INTERNAL });
    withSpan(span, () => logger.info("inside"));
    logger.info("outside");
    span.end();
    await recorder.stop();
    withSpan(startSpan("after"), () => logger.info("off"));
    await new Promise((r) => setImmediate(r));
    const [inside, outside, off] = lines;
    expect(inside).toMatchObject({ msg: "inside", trace_id: span.spanContext().traceId, span_id: span.spanContext().spanId });
    expect(outside).not.toHaveProperty("trace_id");
    expect(off).not.toHaveProperty("trace_id");
  });
});

describe("W3C trace context", () => {
  it("survives inject and extract: the far side's span is a child of the near side's", async () => {
    const recorder = await recordSpans();
    stop = recorder.stop;
    const parent = startSpan("client", { kind: SpanKind.CLIENT });
    const headers: Record<string, string> = {};
    withSpan(parent, () => injectContext(headers, headerSetter));
    expect(headers.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    const remote = extractContext(headers, headerGetter);
    await inSpan("server", { kind: SpanKind.SERVER }, async () => undefined, remote);
    parent.end();
    const [server, client] = recorder.spans();
    expect(server!.name).toBe("server");
    expect(server!.spanContext().traceId).toBe(parent.spanContext().traceId);
    expect(server!.parentSpanContext?.spanId).toBe(parent.spanContext().spanId);
    expect(client!.name).toBe("client");
  });

  it("continues a caller's traceparent and keeps its tracestate", async () => {
    const recorder = await recordSpans();
    stop = recorder.stop;
    const ctx = extractContext({ traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", tracestate: "vendor=abc" }, headerGetter);
    const span = startSpan("edge", {}, ctx);
    const out: Record<string, string> = {};
    withSpan(span, () => injectContext(out, headerSetter));
    span.end();
    expect(span.spanContext().traceId).toBe("0af7651916cd43dd8448eb211c80319c");
    expect(out.traceparent).toBe(`00-0af7651916cd43dd8448eb211c80319c-${span.spanContext().spanId}-01`);
    expect(out.tracestate).toBe("vendor=abc");
  });

  it("marks a span failed with the error's code, never its message", async () => {
    const recorder = await recordSpans();
    stop = recorder.stop;
    const failure = Object.assign(new Error('duplicate key value violates unique constraint "secret"'), { code: "23505" });
    await expect(inSpan("sql", {}, async () => Promise.reject(failure))).rejects.toBe(failure);
    const [span] = recorder.spans();
    expect(span!.status).toEqual({ code: 2, message: "23505" });
    expect(span!.attributes["error.type"]).toBe("23505");
    expect(JSON.stringify(span!.attributes) + JSON.stringify(span!.events)).not.toContain("secret");
  });
});

/** A tiny OTLP/HTTP receiver: the requests it got, bodies whole. */
async function collector() {
  const requests: { path: string; contentType: string; body: Buffer }[] = [];
  const server = createServer((req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      requests.push({ path: req.url ?? "", contentType: String(req.headers["content-type"]), body: Buffer.concat(chunks) });
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { requests, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => new Promise<void>((r) => server.close(() => r())) };
}

describe("tracing on (endpoint set)", () => {
  it.each(["http/json", "http/protobuf"] as const)("exports ended spans over OTLP/HTTP (%s) with the service name, flushed by shutdown", async (protocol) => {
    const sink = await collector();
    let telemetry: Telemetry | undefined;
    try {
      telemetry = await startTelemetry({ service: "edge-test", endpoint: `${sink.url}/`, protocol, scheduleDelayMs: 60_000 });
      expect(telemetry.enabled).toBe(true);
      const span = startSpan("GET /v1/things/:id", { kind: SpanKind.SERVER });
      span.setAttribute("http.response.status_code", 200);
      span.end();
      expect(sink.requests).toHaveLength(0); // batched: nothing leaves before the delay or shutdown
      await telemetry.shutdown();
      expect(tracingEnabled()).toBe(false);
      expect(sink.requests).toHaveLength(1);
      const [request] = sink.requests;
      expect(request!.path).toBe("/v1/traces");
      if (protocol === "http/json") {
        expect(request!.contentType).toContain("application/json");
        const body = JSON.parse(request!.body.toString()) as {
          resourceSpans: {
            resource: { attributes: { key: string; value: { stringValue?: string } }[] };
            scopeSpans: { spans: { name: string; traceId: string }[] }[];
          }[];
        };
        const rs = body.resourceSpans[0]!;
        expect(rs.resource.attributes.find((a) => a.key === "service.name")?.value.stringValue).toBe("edge-test");
        expect(rs.scopeSpans[0]!.spans[0]!.name).toBe("GET /v1/things/:id");
        expect(rs.scopeSpans[0]!.spans[0]!.traceId).toBe(span.spanContext().traceId);
      } else {
        expect(request!.contentType).toContain("application/x-protobuf");
        expect(request!.body.includes(Buffer.from("GET /v1/things/:id"))).toBe(true);
        expect(request!.body.includes(Buffer.from("edge-test"))).toBe(true);
        expect(request!.body.includes(Buffer.from(span.spanContext().traceId, "hex"))).toBe(true);
      }
    } finally {
      await sink.close();
    }
  });
});
