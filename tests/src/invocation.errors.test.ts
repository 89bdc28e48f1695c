import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { MockProvider } from "@gateway/mock-provider";
import { call, startStack, type Stack } from "@gateway/testkit";
import {
  balance,
  customer,
  expectedCost,
  inputBound,
  managedModel,
  mockProvider,
  operator,
  upstream,
  usageRecord,
  type Customer,
  type ManagedModel,
  type Operator,
  balanceWithin1s,
} from "./support/managed-ai.js";

let stack: Stack;
let provider: MockProvider;
let op: Operator;
let model: ManagedModel;

beforeAll(async () => {
  provider = await mockProvider();
  stack = await startStack({ env: { "managed-ai": { PROVIDER_TIMEOUT_MS: "1500" } } });
  op = await operator(stack);
  await upstream(stack, op, provider, "mock");
  model = await managedModel(stack, op, { alias: "small", upstreamId: "mock", inputPerMtok: 2_000_000, outputPerMtok: 8_000_000, maxOutputTokens: 500 });
});
afterAll(async () => {
  await stack?.shutdown();
  await provider?.close();
});
beforeEach(() => provider.reset());

const messages = [{ role: "user", content: "What does it cost?" }];

function invoke(c: Customer, body: Record<string, unknown>, headers: Record<string, string> = {}, alias = "chat") {
  return call(stack.edgeUrl, "POST", `/v1/apps/ai/${alias}/v1/chat/completions`, { body: { messages, ...body }, headers: { "X-API-Key": c.key, ...headers } });
}

const providerCalls = () => provider.requests.filter((r) => r.path === "/v1/chat/completions").length;

describe("402: insufficient balance", () => {
  it("refuses before any provider call, leaves no record, and does not use up the Idempotency-Key", async () => {
    const c = await customer(stack, op, { units: 10, alias: "chat", defaultModel: "small" });
    const res = await invoke(c, { max_tokens: 100 }, { "Idempotency-Key": "retry-me" });
    expect(res.status).toBe(402);
    expect(res.body).toMatchObject({ error: "insufficient_balance", request_id: res.headers.get("x-request-id") });
    expect(providerCalls()).toBe(0);
    expect(await usageRecord(stack, res.headers.get("x-request-id")!)).toBeUndefined();
    expect(await balance(stack, c)).toEqual({ available_units: 10, reserved_units: 0 });

    await call(stack.edgeUrl, "POST", `/ops/ledger/tenants/${c.tenantId}/credits`, { token: op.token, body: { units: 1_000_000, reason: "top-up" } });
    const retried = await invoke(c, { max_tokens: 100 }, { "Idempotency-Key": "retry-me" });
    expect(retried.status).toBe(200);
    expect(providerCalls()).toBe(1);
  });
});

describe("409: cost above max_cost", () => {
  it("answers with the reservation as pricing.cost, calls nobody, and lets the key be retried", async () => {
    const c = await customer(stack, op, { units: 1_000_000, alias: "chat", defaultModel: "small" });
    const reservation = expectedCost(inputBound(messages), 100n, model);
    const res = await invoke(c, { max_tokens: 100, max_cost: 0.0001 }, { "Idempotency-Key": "k-cost" });
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ error: "conflict", pricing: { cost: Number(reservation) / 10_000 } });
    expect(providerCalls()).toBe(0);
    expect((await invoke(c, { max_tokens: 100 }, { "Idempotency-Key": "k-cost" })).status).toBe(200);
    // Exactly at the reservation is allowed.
    expect((await invoke(c, { max_tokens: 100, max_cost: Number(reservation) / 10_000 })).status).toBe(200);
  });

  it("applies the instance's max_cost_per_request too", async () => {
    const c = await customer(stack, op, { units: 1_000_000, alias: "frugal", defaultModel: "small", config: { max_cost_per_request: 0.0002 } });
    const res = await invoke(c, { max_tokens: 100 }, {}, "frugal");
    expect(res.status).toBe(409);
    expect(res.body.pricing.cost).toBeGreaterThan(0.0002);
    expect(providerCalls()).toBe(0);
  });
});

describe("409: Idempotency-Key reused", () => {
  it("lets exactly one of concurrent duplicates through, with exactly one provider call, and replays nothing", async () => {
    const c = await customer(stack, op, { units: 1_000_000, alias: "chat", defaultModel: "small" });
    provider.set({ delayMs: 200 });
    const results = await Promise.all(Array.from({ length: 5 }, () => invoke(c, { max_tokens: 20 }, { "Idempotency-Key": "same" })));
    expect(results.map((r) => r.status).sort()).toEqual([200, 409, 409, 409, 409]);
    expect(providerCalls()).toBe(1);
    const again = await invoke(c, { max_tokens: 20 }, { "Idempotency-Key": "same" });
    expect(again.status).toBe(409);
    expect(again.body.choices).toBeUndefined();
    expect(providerCalls()).toBe(1);

    // A rotated key is the same key; another key is another.
    const rotated = await call(stack.edgeUrl, "POST", `/console/keys/${c.keyId}/rotate`, { token: c.token });
    expect((await invoke({ ...c, key: rotated.body.data.key }, { max_tokens: 20 }, { "Idempotency-Key": "same" })).status).toBe(409);
    const other = await call(stack.edgeUrl, "POST", "/console/keys", { token: c.token, body: { scopes: ["ai:invoke"] } });
    expect((await invoke({ ...c, key: other.body.data.key }, { max_tokens: 20 }, { "Idempotency-Key": "same" })).status).toBe(200);
    expect((await invoke({ ...c, key: rotated.body.data.key }, { max_tokens: 20 }, { "Idempotency-Key": "bad key!" })).status).toBe(400);
  });
});

describe("502: provider failures", () => {
  it("releases the reservation and records the failure with a stable code", async () => {
    const c = await customer(stack, op, { units: 1_000_000, alias: "chat", defaultModel: "small" });
    for (const [behaviour, code] of [
      [{ failStatus: 500 }, "provider_error"],
      [{ failStatus: 503 }, "provider_error"],
      [{ drop: "before-response" }, "provider_unreachable"],
      [{ delayMs: 3_000 }, "provider_timeout"],
    ] as const) {
      provider.reset();
      provider.set(behaviour);
      const res = await invoke(c, { max_tokens: 50 });
      expect(res.status, code).toBe(502);
      expect(res.body.error).toBe("upstream_error");
      expect(await usageRecord(stack, res.headers.get("x-request-id")!)).toMatchObject({ status: "failed", error_code: code, final_units: "0" });
      expect(await balanceWithin1s(stack, c, { available_units: 1_000_000, reserved_units: 0 }), code).toEqual({
        available_units: 1_000_000,
        reserved_units: 0,
      });
    }
  });

  it("reports a provider that is not listening as unreachable", async () => {
    await call(stack.edgeUrl, "PUT", "/ops/ai/upstreams/gone", {
      token: op.token,
      body: { provider: "openai", base_url: "http://127.0.0.1:1/v1", api_key: "sk-x" },
    });
    await managedModel(stack, op, { alias: "nowhere", upstreamId: "gone", inputPerMtok: 1, outputPerMtok: 1 });
    const c = await customer(stack, op, { units: 1_000, alias: "chat", defaultModel: "nowhere" });
    const res = await invoke(c, { max_tokens: 5 });
    expect(res.status).toBe(502);
    expect(await usageRecord(stack, res.headers.get("x-request-id")!)).toMatchObject({ status: "failed", error_code: "provider_unreachable" });
  });

  it("answers a provider's refusal of the request as a clear 4xx and releases the hold", async () => {
    const c = await customer(stack, op, { units: 1_000_000, alias: "chat", defaultModel: "small" });
    provider.set({ failStatus: 400 });
    const res = await invoke(c, { max_tokens: 50 });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe("invalid_request");
    expect(res.body.message).toMatch(/provider refused/);
    expect(await usageRecord(stack, res.headers.get("x-request-id")!)).toMatchObject({ status: "failed", error_code: "provider_rejected" });
    provider.set({ failStatus: 429 });
    const busy = await invoke(c, { max_tokens: 50 });
    expect(busy.status).toBe(503);
    expect(await balance(stack, c)).toEqual({ available_units: 1_000_000, reserved_units: 0 });
  });
});

describe("400: what managed models refuse, and limits", () => {
  it("names the parameter", async () => {
    const c = await customer(stack, op, { units: 1_000_000, alias: "chat", defaultModel: "small", config: { max_tokens_per_request: 300 } });
    const cases: [Record<string, unknown>, string][] = [
      [{ n: 9 }, "n"],
      [{ service_tier: "flex" }, "service_tier"],
      [{ logit_bias: { x: -100 } }, "logit_bias"],
      [{ tools: [{ type: "function", function: { name: "not a name" } }] }, "tools"],
      // The model has no max_tokens_per_image: images are refused (CONTRACT.md 6b).
      [{ messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: "https://x.example/a.png" } }] }] }, "messages"],
      [{ max_tokens: 400 }, "max_tokens"],
      [{ model: "unknown-model" }, "model"],
    ];
    for (const [body, param] of cases) {
      const res = await invoke(c, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.param ?? res.body.message, JSON.stringify(body)).toContain(param);
    }
    expect((await invoke(c, { max_tokens: 400 })).body.message).toContain("max_tokens_per_request (300)");
    const overModel = await customer(stack, op, { units: 1_000, alias: "open", defaultModel: "small" });
    expect((await invoke(overModel, { max_tokens: 600 }, {}, "open")).body.message).toContain("max_output_tokens (500)");
    expect(providerCalls()).toBe(0);
  });

  it("one schema: what the edge used to refuse in its own words is managed-ai's answer, naming the parameter", async () => {
    const c = await customer(stack, op, { units: 1_000_000, alias: "chat", defaultModel: "small" });
    const cases: [Record<string, unknown>, string][] = [
      [{ messages: [] }, "messages"],
      [{ messages: [{ role: 1, content: "hi" }] }, "messages"],
      [{ max_tokens: 1.5 }, "max_tokens"],
      [{ model: 7 }, "model"],
      [{ stream: "yes" }, "stream"],
    ];
    for (const [body, param] of cases) {
      const res = await invoke(c, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error).toBe("invalid_request");
      expect(res.body.param, JSON.stringify(body)).toBe(param);
    }
    const embed = await call(stack.edgeUrl, "POST", "/v1/apps/ai/chat/v1/embeddings", { body: { input: 5 }, headers: { "X-API-Key": c.key } });
    expect(embed.status).toBe(400);
    expect(
      (
        await call(stack.edgeUrl, "POST", "/v1/apps/ai/chat/v1/chat/completions", {
          rawBody: "hi",
          headers: { "X-API-Key": c.key, "content-type": "text/plain" },
        })
      ).body.message,
    ).toBe("A JSON body is required.");
    expect(providerCalls()).toBe(0);
  });

  it("refuses bad bodies, unknown or disabled instances, and keys that may not call", async () => {
    const c = await customer(stack, op, { units: 1_000, alias: "chat", defaultModel: "small" });
    expect(
      (
        await call(stack.edgeUrl, "POST", "/v1/apps/ai/chat/v1/chat/completions", {
          rawBody: "{nope",
          headers: { "X-API-Key": c.key, "content-type": "application/json" },
        })
      ).status,
    ).toBe(400);
    expect((await invoke(c, { messages: [] })).status).toBe(400);
    expect((await invoke(c, {}, {}, "no-such-instance")).status).toBe(404);
    await call(stack.edgeUrl, "POST", "/console/services", {
      token: c.token,
      body: { service_id: "ai-model", alias: "off", status: "disabled", config: { mode: "managed", default_model: "small" } },
    });
    expect((await invoke(c, {}, {}, "off")).status).toBe(403);
    const noScope = await call(stack.edgeUrl, "POST", "/console/keys", { token: c.token, body: { scopes: ["jobs:read"] } });
    expect((await invoke({ ...c, key: noScope.body.data.key }, {})).status).toBe(403);
    // Service alias restriction (CONTRACT.md section 3): ai-model:<alias>.
    const onlyOther = await call(stack.edgeUrl, "POST", "/console/keys", {
      token: c.token,
      body: { scopes: ["ai:invoke"], service_aliases: ["ai-model:other"] },
    });
    const denied = await invoke({ ...c, key: onlyOther.body.data.key }, { max_tokens: 5 });
    expect(denied.status).toBe(403);
    const onlyChat = await call(stack.edgeUrl, "POST", "/console/keys", {
      token: c.token,
      body: { scopes: ["ai:invoke"], service_aliases: ["ai-model:chat"] },
    });
    expect((await invoke({ ...c, key: onlyChat.body.data.key }, { max_tokens: 5 })).status).toBe(200);
  });

  it("answers 503 for a model without a price", async () => {
    await call(stack.edgeUrl, "PUT", "/ops/ai/models/unpriced", { token: op.token, body: { upstream_id: "mock", upstream_model: "mock-small" } });
    const c = await customer(stack, op, { units: 1_000, alias: "chat", defaultModel: "unpriced" });
    const res = await invoke(c, { max_tokens: 5 });
    expect(res.status).toBe(503);
    expect(providerCalls()).toBe(0);
  });
});

describe("instances", () => {
  it("are created and updated by alias, validated, and listed for the tenant", async () => {
    const c = await customer(stack, op, { units: 0, alias: "first", defaultModel: "small" });
    const updated = await call(stack.edgeUrl, "POST", "/console/services", {
      token: c.token,
      body: {
        service_id: "ai-model",
        alias: "first",
        status: "active",
        config: { mode: "managed", default_model: "small", models: ["small"], max_tokens_per_request: 64 },
      },
    });
    expect(updated.status).toBe(201);
    expect(updated.body.data).toMatchObject({ alias: "first", version: 2, config: { default_model: "small", models: ["small"], max_tokens_per_request: 64 } });
    const list = await call(stack.edgeUrl, "GET", "/console/services", { token: c.token });
    expect(list.body.data).toHaveLength(1);
    const bad = async (body: Record<string, unknown>) =>
      (await call(stack.edgeUrl, "POST", "/console/services", { token: c.token, body: { service_id: "ai-model", alias: "x", status: "active", ...body } }))
        .status;
    expect(await bad({ config: { mode: "managed", default_model: "missing" } })).toBe(422);
    expect(await bad({ config: { mode: "managed", default_model: "small", models: ["nowhere"] } })).toBe(422);
    expect(await bad({ config: { mode: "byok", default_model: "small" } })).toBe(400);
    expect(await bad({ config: { mode: "managed", default_model: "small", surprise: 1 } })).toBe(400);
  });
});
