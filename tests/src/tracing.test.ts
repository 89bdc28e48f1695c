import { randomBytes } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { MockProvider } from "@gateway/mock-provider";
import { startStack, type Stack } from "@gateway/testkit";
import { customer, managedModel, mockProvider, operator, upstream, type Customer } from "./support/managed-ai.js";

/** A span as an OTLP/HTTP JSON export carries it, with its resource's service.name. */
type Exported = { service: string; traceId: string; spanId: string; parentSpanId?: string; name: string; kind: number; attributes: Record<string, unknown> };
const SERVER = 2;
const CLIENT = 3;

/** A tiny OTLP/HTTP (JSON) collector: every span it was sent. */
async function collector() {
  const spans: Exported[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      type Attr = { key: string; value: Record<string, unknown> };
      const body = JSON.parse(Buffer.concat(chunks).toString()) as {
        resourceSpans: { resource: { attributes: Attr[] }; scopeSpans: { spans: (Omit<Exported, "service" | "attributes"> & { attributes: Attr[] })[] }[] }[];
      };
      for (const rs of body.resourceSpans) {
        const service = String(rs.resource.attributes.find((a) => a.key === "service.name")?.value.stringValue);
        for (const ss of rs.scopeSpans)
          for (const s of ss.spans) spans.push({ ...s, service, attributes: Object.fromEntries(s.attributes.map((a) => [a.key, Object.values(a.value)[0]])) });
      }
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { spans, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => new Promise<void>((r) => server.close(() => r())) };
}

let sink: Awaited<ReturnType<typeof collector>>;
let stack: Stack;
let provider: MockProvider;
let c: Customer;

beforeAll(async () => {
  sink = await collector();
  provider = await mockProvider();
  const otel = { OTEL_EXPORTER_OTLP_ENDPOINT: sink.url, OTEL_EXPORTER_OTLP_PROTOCOL: "http/json", OTEL_BSP_SCHEDULE_DELAY: "100" };
  stack = await startStack({ services: ["ledger", "managed-ai"], env: { edge: otel, ledger: otel, "managed-ai": otel } });
  const op = await operator(stack);
  await upstream(stack, op, provider, "mock");
  await managedModel(stack, op, { alias: "small", upstreamId: "mock", inputPerMtok: 150_000, outputPerMtok: 600_000 });
  c = await customer(stack, op, { units: 1_000_000, alias: "chat", defaultModel: "small" });
});

afterAll(async () => {
  await stack?.shutdown();
  await provider?.close();
  await sink?.close();
});

describe("one trace across every hop of a metered completion", () => {
  it("edge → managed-ai → ledger → ledger_apply, and managed-ai → provider, all in the caller's trace", async () => {
    const traceId = randomBytes(16).toString("hex");
    const callerSpanId = randomBytes(8).toString("hex");
    const res = await fetch(`${stack.edgeUrl}/v1/apps/ai/chat/v1/chat/completions`, {
      method: "POST",
      headers: { "x-api-key": c.key, "content-type": "application/json", traceparent: `00-${traceId}-${callerSpanId}-01` },
      body: JSON.stringify({ model: "small", messages: [{ role: "user", content: "Trace me" }], max_tokens: 20 }),
    });
    expect(res.status).toBe(200);
    await res.json();

    const inTrace = () => sink.spans.filter((s) => s.traceId === traceId);
    const byId = () => new Map(inTrace().map((s) => [s.spanId, s]));
    const parentOf = (s: Exported) => (s.parentSpanId ? byId().get(s.parentSpanId) : undefined);
    const descendsFrom = (s: Exported, ancestor: Exported): boolean => {
      for (let p = parentOf(s); p; p = parentOf(p)) if (p.spanId === ancestor.spanId) return true;
      return false;
    };
    // The capture follows the answer, and spans leave each process in its own batches (the
    // edge's may come last): wait for the whole trace, every parent present.
    const complete = () => {
      const spans = inTrace();
      const ids = new Set(spans.map((s) => s.spanId));
      return (
        spans.some((s) => s.service === "edge" && s.kind === SERVER) &&
        spans.some((s) => s.service === "managed-ai" && s.name === "POST /chat/completions") &&
        new Set(spans.filter((s) => s.name === "ledger_apply").map((s) => s.spanId)).size >= 2 &&
        spans.every((s) => !s.parentSpanId || s.parentSpanId === callerSpanId || ids.has(s.parentSpanId))
      );
    };
    await expect.poll(complete, { timeout: 15_000, interval: 100 }).toBe(true);

    // The edge continues the caller's trace, one server span named after the route.
    const edge = inTrace().find((s) => s.service === "edge" && s.kind === SERVER)!;
    expect(edge).toBeDefined();
    expect(edge.parentSpanId).toBe(callerSpanId);
    expect(edge.name).toBe("POST /v1/apps/ai/:alias/v1/chat/completions");
    expect(edge.attributes["http.response.status_code"]).toBe(200);

    // edge gRPC client → managed-ai gRPC server.
    const ai = inTrace().find((s) => s.service === "managed-ai" && s.kind === SERVER)!;
    expect(ai).toBeDefined();
    const edgeClient = parentOf(ai)!;
    expect(edgeClient).toMatchObject({ service: "edge", kind: CLIENT, name: ai.name });
    expect(parentOf(edgeClient)?.spanId).toBe(edge.spanId);

    // managed-ai gRPC client → ledger gRPC server → the ledger's batch statement, for the reserve and the capture.
    const applies = inTrace().filter((s) => s.service === "ledger" && s.name === "ledger_apply");
    for (const apply of applies) {
      const ledgerServer = parentOf(apply)!;
      expect(ledgerServer).toMatchObject({ service: "ledger", kind: SERVER });
      const aiClient = parentOf(ledgerServer)!;
      expect(aiClient).toMatchObject({ service: "managed-ai", kind: CLIENT, name: ledgerServer.name });
      expect(descendsFrom(aiClient, ai)).toBe(true);
      expect(apply.attributes["ledger.batch.size"]).toBeGreaterThanOrEqual(1);
    }

    // managed-ai → the provider, which got the provider span as its parent in traceparent.
    const call = inTrace().find((s) => s.service === "managed-ai" && s.name === "POST /chat/completions")!;
    expect(call).toMatchObject({ kind: CLIENT });
    expect(descendsFrom(call, ai)).toBe(true);
    const sent = provider.requests.at(-1)!;
    expect(sent.headers.traceparent).toBe(`00-${traceId}-${call.spanId}-01`);

    // No secrets in any attribute of the trace: the customer's key, the provider's key.
    const attributes = JSON.stringify(inTrace().map((s) => s.attributes));
    expect(attributes).not.toContain(c.key);
    expect(attributes).not.toContain(String(sent.headers.authorization).replace("Bearer ", ""));
  });
});
