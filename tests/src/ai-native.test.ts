import { beforeAll, describe, expect, it } from "vitest";
import { embeddingOf, embeddingTokens, promptTokens, type MockProvider } from "@gateway/mock-provider";
import { call, type Stack } from "@gateway/testkit";
import { sseData } from "./support/byok.js";
import {
  balance,
  customer,
  expectedCost,
  inputBound,
  meteredStack,
  sdk,
  usageRecord,
  usd,
  type ManagedModel,
  type Operator,
  balanceWithin1s,
} from "./support/managed-ai.js";

let stack: Stack;
let provider: MockProvider;
let op: Operator;
let model: ManagedModel;
const metered = meteredStack();
beforeAll(() => {
  ({ stack, provider, op, model } = metered);
});

const messages = [
  { role: "system" as const, content: "You are terse." },
  { role: "user" as const, content: "Native hello" },
];
const bytes = (s: string) => BigInt(Buffer.byteLength(s, "utf8"));

describe("native routes on a managed instance are metered exactly as the compatible route", () => {
  it("chat: reserve the worst case, charge the usage rounded up, answer the native shape with the three headers", async () => {
    const c = await customer(stack, op, { units: 1_000_000, alias: "nat", defaultModel: "small" });
    const res = await call(stack.edgeUrl, "POST", "/v1/apps/ai/nat/chat", { headers: { "x-api-key": c.key }, body: { messages, max_tokens: 30 } });
    expect(res.status).toBe(200);
    const prompt = promptTokens(messages);
    expect(res.body).toEqual({
      data: {
        id: expect.stringMatching(/^chatcmpl-mock-/),
        model: "small",
        content: "Mock reply to: Native hello",
        finish_reason: "stop",
        usage: { prompt_tokens: prompt, completion_tokens: expect.any(Number), total_tokens: expect.any(Number) },
      },
    });
    const usage = res.body.data.usage;
    const reservation = expectedCost(inputBound(messages), 30n, model);
    const charge = expectedCost(BigInt(usage.prompt_tokens), BigInt(usage.completion_tokens), model);
    expect(res.headers.get("x-service-estimated-cost")).toBe(usd(reservation));
    expect(res.headers.get("x-service-final-cost")).toBe(usd(charge));
    expect(res.headers.get("x-service-total-tokens")).toBe(String(usage.prompt_tokens + usage.completion_tokens));
    expect(provider.requests.at(-1)!.body).toMatchObject({ model: "mock-small", max_tokens: 30, messages });
    expect(await usageRecord(stack, res.headers.get("x-request-id")!)).toMatchObject({
      status: "completed",
      reserved_units: reservation.toString(),
      final_units: charge.toString(),
    });
    expect(await balance(stack, c)).toEqual({ available_units: 1_000_000 - Number(charge), reserved_units: 0 });
  });

  it("stream: delta events, then finish_reason and usage, then [DONE]; only the estimate in the headers; settled after the last byte", async () => {
    const c = await customer(stack, op, { units: 1_000_000, alias: "nat", defaultModel: "small" });
    const res = await fetch(`${stack.edgeUrl}/v1/apps/ai/nat/chat/stream`, {
      method: "POST",
      headers: { "x-api-key": c.key, "content-type": "application/json" },
      body: JSON.stringify({ messages, max_tokens: 40 }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/event-stream");
    expect(res.headers.get("x-service-estimated-cost")).toBe(usd(expectedCost(inputBound(messages), 40n, model)));
    expect(res.headers.get("x-service-final-cost")).toBeNull();
    const events = sseData(await res.text());
    expect(events.at(-1)).toBe("[DONE]");
    const parsed = events.slice(0, -1).map((e) => JSON.parse(e));
    const last = parsed.at(-1);
    expect(
      parsed
        .slice(0, -1)
        .map((e) => e.delta)
        .join(""),
    ).toBe("Mock reply to: Native hello");
    expect(last).toEqual({
      finish_reason: "stop",
      usage: { prompt_tokens: promptTokens(messages), completion_tokens: expect.any(Number), total_tokens: expect.any(Number) },
    });
    const charge = expectedCost(BigInt(last.usage.prompt_tokens), BigInt(last.usage.completion_tokens), model);
    expect(await usageRecord(stack, res.headers.get("x-request-id")!)).toMatchObject({ status: "completed", final_units: charge.toString() });
    expect(await balance(stack, c)).toEqual({ available_units: 1_000_000 - Number(charge), reserved_units: 0 });
  });

  it("embeddings: the input bound at the input price is reserved, the reported tokens charged", async () => {
    const c = await customer(stack, op, { units: 1_000_000, alias: "nat", defaultModel: "small" });
    const input = ["first text", "second, longer text é"];
    const res = await call(stack.edgeUrl, "POST", "/v1/apps/ai/nat/embeddings", { headers: { "x-api-key": c.key }, body: { input } });
    expect(res.status).toBe(200);
    const tokens = embeddingTokens(input[0]!) + embeddingTokens(input[1]!);
    expect(res.body).toEqual({
      data: { model: "small", embeddings: input.map((i) => embeddingOf(i)), usage: { prompt_tokens: tokens, total_tokens: tokens } },
    });
    expect(provider.requests.at(-1)!).toMatchObject({ path: "/v1/embeddings", body: { model: "mock-small", input } });
    const reservation = expectedCost(bytes(input[0]!) + bytes(input[1]!), 0n, model);
    const charge = expectedCost(BigInt(tokens), 0n, model);
    expect(res.headers.get("x-service-estimated-cost")).toBe(usd(reservation));
    expect(res.headers.get("x-service-final-cost")).toBe(usd(charge));
    expect(res.headers.get("x-service-total-tokens")).toBe(String(tokens));
    expect(await usageRecord(stack, res.headers.get("x-request-id")!)).toMatchObject({
      status: "completed",
      reserved_units: reservation.toString(),
      final_units: charge.toString(),
    });
    expect(await balance(stack, c)).toEqual({ available_units: 1_000_000 - Number(charge), reserved_units: 0 });

    // The compatible embeddings route is the same metered call, through the official SDK.
    const viaSdk = await sdk(stack, c, "nat").embeddings.create({ model: "small", input: "third" }).withResponse();
    expect(viaSdk.data.data[0]!.embedding.map((f) => Math.round(f * 1e4))).toEqual(embeddingOf("third").map((f) => Math.round(f * 1e4)));
    const second = expectedCost(BigInt(embeddingTokens("third")), 0n, model);
    expect(viaSdk.response.headers.get("x-service-final-cost")).toBe(usd(second));
    expect(viaSdk.response.headers.get("x-service-price-version")).toBe(model.priceId);
    const left = 1_000_000 - Number(charge) - Number(second);
    expect((await balanceWithin1s(stack, c, { available_units: left })).available_units).toBe(left);
  });
});

describe("native routes refuse before any provider call", () => {
  it("max_tokens above the instance's cap (400), a worst case above max_cost (409), an empty balance (402), provider failure (502, released)", async () => {
    const c = await customer(stack, op, { units: 1_000_000, alias: "guarded", defaultModel: "small", config: { max_tokens_per_request: 20 } });
    const headers = { "x-api-key": c.key };
    const calls = provider.requests.length;
    const capped = await call(stack.edgeUrl, "POST", "/v1/apps/ai/guarded/chat", { headers, body: { messages, max_tokens: 21 } });
    expect(capped.status).toBe(400);
    expect(capped.body).toMatchObject({ error: "invalid_request", param: "max_tokens" });
    const reservation = expectedCost(inputBound(messages), 20n, model);
    const ceiling = await call(stack.edgeUrl, "POST", "/v1/apps/ai/guarded/chat/stream", {
      headers,
      body: { messages, max_cost: Number(usd(reservation - 1n)) },
    });
    expect(ceiling.status).toBe(409);
    expect(ceiling.body.pricing).toEqual({ cost: Number(usd(reservation)) });
    const poor = await customer(stack, op, { units: 0, alias: "poor", defaultModel: "small" });
    const broke = await call(stack.edgeUrl, "POST", "/v1/apps/ai/poor/embeddings", { headers: { "x-api-key": poor.key }, body: { input: "costs something" } });
    expect(broke.status).toBe(402);
    expect(provider.requests.length).toBe(calls);

    provider.set({ failStatus: 500 });
    try {
      const failed = await call(stack.edgeUrl, "POST", "/v1/apps/ai/guarded/embeddings", { headers, body: { input: "x" } });
      expect(failed.status).toBe(502);
      expect(await usageRecord(stack, failed.headers.get("x-request-id")!)).toMatchObject({ status: "failed", final_units: "0" });
    } finally {
      provider.reset();
    }
    expect(await balance(stack, c)).toEqual({ available_units: 1_000_000, reserved_units: 0 });
  });
});
