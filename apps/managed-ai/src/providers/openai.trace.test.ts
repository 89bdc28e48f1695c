import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { inSpan, SpanKind } from "@gateway/telemetry";
import { recordSpans } from "@gateway/telemetry/testing";
import { afterAll, beforeAll, beforeEach, expect, it } from "vitest";
import { ProviderClient } from "./openai.js";

let recorder: Awaited<ReturnType<typeof recordSpans>>;
let baseUrl: string;
let close: () => void;
const received: IncomingHttpHeaders[] = [];
const client = new ProviderClient({ headersMs: 2_000, idleMs: 2_000 });

beforeAll(async () => {
  recorder = await recordSpans("managed-ai");
  const server = createServer((req, res) => {
    received.push(req.headers);
    req.resume();
    if (req.url?.endsWith("/limited/chat/completions")) return void res.writeHead(429, { "retry-after": "3" }).end('{"error":{"message":"slow down"}}');
    res.writeHead(200, { "content-type": "application/json" }).end('{"id":"chatcmpl-1","choices":[]}');
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  close = () => server.close();
});

afterAll(async () => {
  await client.close();
  close();
  await recorder.stop();
});

beforeEach(() => {
  recorder.reset();
  received.length = 0;
});

it("the provider call is a client span of the caller's trace, and the provider gets its traceparent (never the key in the span)", async () => {
  let caller!: { traceId: string; spanId: string };
  await inSpan("caller", {}, async (span) => {
    caller = span.spanContext();
    const res = await client.chat({ baseUrl, apiKey: "sk-provider-secret", body: { model: "m", messages: [] } });
    await client.json(res.body);
  });
  await expect.poll(() => recorder.spans().filter((s) => s.name === "POST /chat/completions").length).toBe(1);
  const span = recorder.spans().find((s) => s.name === "POST /chat/completions")!;
  expect(span.kind).toBe(SpanKind.CLIENT);
  expect(span.spanContext().traceId).toBe(caller.traceId);
  expect(span.parentSpanContext?.spanId).toBe(caller.spanId);
  expect(span.attributes).toMatchObject({
    "http.request.method": "POST",
    "http.response.status_code": 200,
    "server.address": "127.0.0.1",
    "gateway.egress": "operator",
  });
  expect(received[0]!.traceparent).toBe(`00-${caller.traceId}-${span.spanContext().spanId}-01`);
  expect(received[0]!.authorization).toBe("Bearer sk-provider-secret");
  expect(JSON.stringify(span.attributes)).not.toContain("sk-provider-secret");
});

it("a refused call marks the span failed with the provider error's code", async () => {
  await inSpan("caller", {}, async () => {
    await expect(client.chat({ baseUrl: `${baseUrl}/limited`, apiKey: "k", body: {} })).rejects.toMatchObject({ code: "provider_rate_limited" });
  });
  const span = recorder.spans().find((s) => s.name === "POST /chat/completions")!;
  expect(span.attributes["http.response.status_code"]).toBe(429);
  expect(span.status).toEqual({ code: 2, message: "provider_rate_limited" });
});
