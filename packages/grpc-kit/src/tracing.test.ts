import { createLogger } from "@gateway/logger";
import { createRegistry } from "@gateway/metrics";
import { inSpan, SpanKind, startSpan } from "@gateway/telemetry";
import { recordSpans, type ReadableSpan } from "@gateway/telemetry/testing";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createClient, GrpcServer, type Client } from "./index.js";
import { echoContract } from "./testdata/echo.js";

let recorder: Awaited<ReturnType<typeof recordSpans>>;
const TOKEN = "tracing-test-service-token-0123456789abcdef";
let server: GrpcServer;
let client: Client<typeof echoContract>;

beforeAll(async () => {
  recorder = await recordSpans("echo");
  const registry = createRegistry("test");
  server = new GrpcServer({ logger: createLogger({ service: "echo", level: "silent" }), registry, serviceToken: TOKEN });
  server.add(echoContract, {
    Carry: (stream) => stream.end(),
    async Say(req, ctx) {
      // Work inside the handler is a child of the server span.
      startSpan("inside Say").end();
      if (req.fail_with === "conflict") throw Object.assign(new Error("cost above max_cost"), { name: "AppError" });
      return { text: req.text.toUpperCase(), request_id: ctx.requestId };
    },
    async Collect(requests, ctx) {
      const texts: string[] = [];
      for await (const r of requests) texts.push(r.text);
      startSpan("inside Collect").end();
      return { text: texts.join(","), request_id: ctx.requestId };
    },
    async Count(req, ctx, send) {
      startSpan("inside Count").end();
      for (let i = 1; i <= req.to; i++) await send({ text: String(i), request_id: ctx.requestId });
    },
  });
  const port = await server.listen("127.0.0.1", 0);
  client = createClient(echoContract, `127.0.0.1:${port}`, { deadlineMs: 2_000, name: "echo", registry, serviceToken: TOKEN });
});

afterAll(async () => {
  client.close();
  await server.shutdown(1_000);
  await recorder.stop();
});

beforeEach(() => recorder.reset());

function named(name: string, kind?: SpanKind): ReadableSpan {
  const span = recorder.spans().find((s) => s.name === name && (kind === undefined || s.kind === kind));
  if (!span)
    throw new Error(
      `no span ${name}; got ${recorder
        .spans()
        .map((s) => s.name)
        .join(", ")}`,
    );
  return span;
}

/** caller → client span → server span → the handler's own span, all in the caller's trace. */
async function expectChain(method: string, inside: string, callerTraceId: string, callerSpanId: string) {
  // The server ends its span as it answers; the client's may end an instant later.
  await expect.poll(() => recorder.spans().filter((s) => s.name === `test.echo.v1.Echo/${method}`).length).toBe(2);
  const clientSpan = named(`test.echo.v1.Echo/${method}`, SpanKind.CLIENT);
  const serverSpan = named(`test.echo.v1.Echo/${method}`, SpanKind.SERVER);
  const handlerSpan = named(inside);
  for (const s of [clientSpan, serverSpan, handlerSpan]) expect(s.spanContext().traceId).toBe(callerTraceId);
  expect(clientSpan.parentSpanContext?.spanId).toBe(callerSpanId);
  expect(serverSpan.parentSpanContext?.spanId).toBe(clientSpan.spanContext().spanId);
  expect(serverSpan.parentSpanContext?.isRemote).toBe(true);
  expect(handlerSpan.parentSpanContext?.spanId).toBe(serverSpan.spanContext().spanId);
  expect(serverSpan.attributes).toMatchObject({ "rpc.system": "grpc", "rpc.service": "test.echo.v1.Echo", "rpc.method": method, "rpc.grpc.status_code": 0 });
  return { clientSpan, serverSpan };
}

describe("trace context over gRPC metadata", () => {
  it("a unary call made inside a span arrives in the same trace, its server span a child of the client span", async () => {
    await inSpan("caller", {}, async (caller) => {
      await client.Say({ text: "hi" });
      const { serverSpan } = await expectChain("Say", "inside Say", caller.spanContext().traceId, caller.spanContext().spanId);
      expect(serverSpan.attributes["gateway.request_id"]).toMatch(/^req_/);
    });
  });

  it("so does a server-streaming call", async () => {
    await inSpan("caller", {}, async (caller) => {
      const got: string[] = [];
      for await (const m of client.Count({ to: 3 })) got.push(m.text);
      expect(got).toEqual(["1", "2", "3"]);
      await expectChain("Count", "inside Count", caller.spanContext().traceId, caller.spanContext().spanId);
    });
  });

  it("and a client-streaming call", async () => {
    await inSpan("caller", {}, async (caller) => {
      const call = client.Collect();
      await call.write({ text: "a" });
      await call.write({ text: "b" });
      expect((await call.end()).text).toBe("a,b");
      await expectChain("Collect", "inside Collect", caller.spanContext().traceId, caller.spanContext().spanId);
    });
  });

  it("a failed call marks both spans failed, without the error's message", async () => {
    await inSpan("caller", {}, async () => {
      await expect(client.Say({ text: "x", fail_with: "conflict" })).rejects.toThrow();
    });
    await expect.poll(() => recorder.spans().filter((s) => s.name === "test.echo.v1.Echo/Say").length).toBe(2);
    const clientSpan = named("test.echo.v1.Echo/Say", SpanKind.CLIENT);
    const serverSpan = named("test.echo.v1.Echo/Say", SpanKind.SERVER);
    // An unknown error is INTERNAL: the server failed, and the caller's call failed.
    expect(serverSpan.status).toEqual({ code: 2, message: "INTERNAL" });
    expect(clientSpan.status).toEqual({ code: 2, message: "INTERNAL" });
    expect(JSON.stringify([clientSpan.attributes, serverSpan.attributes])).not.toContain("max_cost");
  });

  it("a call made outside any span starts a new trace at the client", async () => {
    await client.Say({ text: "alone" });
    await expect.poll(() => recorder.spans().filter((s) => s.name === "test.echo.v1.Echo/Say").length).toBe(2);
    const clientSpan = named("test.echo.v1.Echo/Say", SpanKind.CLIENT);
    expect(clientSpan.parentSpanContext).toBeUndefined();
    expect(named("test.echo.v1.Echo/Say", SpanKind.SERVER).spanContext().traceId).toBe(clientSpan.spanContext().traceId);
  });
});
