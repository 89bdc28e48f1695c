import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient } from "@gateway/grpc-kit";
import { embeddingOf, embeddingTokens, promptTokens, type MockProvider } from "@gateway/mock-provider";
import { managedAiV1 } from "@gateway/protos";
import { call, startStack, type Stack } from "@gateway/testkit";
import { ACCOUNT_SECRET, byokInstance, CUSTOMER_KEY, customerProvider, sseData, tenantWithKey, type ByokCustomer } from "./support/byok.js";
import { balance, expectedCost, inputBound, operator, sdk, usd, type Operator } from "./support/managed-ai.js";
import { eventually } from "./support/operators.js";

let stack: Stack;
let provider: MockProvider;
let op: Operator;

const PRICING = { input_units_per_mtok: 2_000_003, output_units_per_mtok: 8_000_009 };
const PRICE = { inputPerMtok: PRICING.input_units_per_mtok, outputPerMtok: PRICING.output_units_per_mtok };

beforeAll(async () => {
  provider = await customerProvider();
  // The mock listens on 127.0.0.1: customer URLs may reach private addresses in this test only.
  stack = await startStack({ env: { "managed-ai": { ALLOW_PRIVATE_TARGETS: "true" } } });
  op = await operator(stack);
});
afterAll(async () => {
  await stack?.shutdown();
  await provider?.close();
});

const messages = [
  { role: "system" as const, content: "Be brief." },
  { role: "user" as const, content: "Hello from my own key" },
];

/** The tenant's usage records of one mode: byok calls are recorded (decision 0025), never as managed (charged) ones. */
async function usageRecords(tenantId: string, mode: "managed" | "byok" = "managed"): Promise<number> {
  const rows = await stack.sql<{ n: string }>("managed-ai", "SELECT count(*)::text AS n FROM usage_records WHERE tenant_id = $1 AND mode = $2", [
    tenantId,
    mode,
  ]);
  return Number(rows[0]!.n);
}

async function withByok(alias: string, config: Record<string, unknown> = {}): Promise<ByokCustomer> {
  const c = await tenantWithKey(stack, op);
  const created = await byokInstance(stack, c, alias, provider, { pricing: PRICING, ...config });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return c;
}

describe("byok instances through /console/services", () => {
  it("are created with an inline key, listed beside managed ones, the key shown only as [redacted] and sealed at rest", async () => {
    const c = await tenantWithKey(stack, op);
    const res = await fetch(`${stack.edgeUrl}/console/services`, {
      method: "POST",
      headers: { authorization: `Bearer ${c.token}`, "content-type": "application/json" },
      body: JSON.stringify({
        service_id: "ai-model",
        alias: "mine",
        status: "active",
        config: {
          mode: "byok",
          provider: "openai",
          base_url: `${provider.url}/`,
          default_model: "mock-small",
          api_key: CUSTOMER_KEY,
          max_tokens_per_request: 500,
          pricing: PRICING,
        },
      }),
    });
    const raw = await res.text();
    expect(res.status, raw).toBe(201);
    expect(raw).not.toContain(CUSTOMER_KEY);
    expect(JSON.parse(raw).data).toMatchObject({
      service_id: "ai-model",
      alias: "mine",
      status: "active",
      version: 1,
      connected_account_id: null,
      config: {
        mode: "byok",
        provider: "openai",
        base_url: provider.url,
        default_model: "mock-small",
        api_key: "[redacted]",
        max_tokens_per_request: 500,
        max_cost_per_request: null,
        pricing: PRICING,
      },
    });

    // A managed instance of another kind of config on the same tenant is listed too (newest first).
    const op2 = await call(stack.edgeUrl, "POST", "/console/services", {
      token: c.token,
      body: { service_id: "ai-model", alias: "managed-one", status: "disabled", config: { mode: "managed", default_model: "nothing-yet" } },
    });
    expect(op2.status).toBe(422); // no such managed model: nothing written
    const listRes = await fetch(`${stack.edgeUrl}/console/services`, { headers: { authorization: `Bearer ${c.token}` } });
    const listRaw = await listRes.text();
    expect(listRaw).not.toContain(CUSTOMER_KEY);
    expect(JSON.parse(listRaw).data).toEqual([expect.objectContaining({ alias: "mine", config: expect.objectContaining({ api_key: "[redacted]" }) })]);

    // At rest: the key is sealed in its own column, not in the config.
    const [row] = await stack.sql<{ config: unknown; api_key_ciphertext: Buffer; api_key_key_id: string }>(
      "managed-ai",
      "SELECT config, api_key_ciphertext, api_key_key_id FROM service_instances WHERE tenant_id = $1",
      [c.tenantId],
    );
    expect(JSON.stringify(row!.config)).not.toContain(CUSTOMER_KEY);
    expect(row!.api_key_ciphertext.includes(Buffer.from(CUSTOMER_KEY))).toBe(false);
    expect(row!.api_key_ciphertext.length).toBe(12 + CUSTOMER_KEY.length + 16);
  });

  it("are updated by alias and validated: exactly one credential, a usable URL, a known account", async () => {
    const c = await withByok("edit");
    const updated = await byokInstance(stack, c, "edit", provider, { default_model: "mock-large", max_cost_per_request: 0.5 });
    expect(updated.status).toBe(201);
    expect(updated.body.data).toMatchObject({ version: 2, config: { default_model: "mock-large", max_cost_per_request: 0.5, pricing: null } });
    const status = async (config: Record<string, unknown>, top: Record<string, unknown> = {}) =>
      (await byokInstance(stack, c, "bad", provider, config, top)).status;
    expect(await status({}, { connected_account_id: "acct_nope" })).toBe(400); // both
    expect(await status({ api_key: undefined })).toBe(400); // neither
    expect(await status({ api_key: undefined }, { connected_account_id: "acct_nope" })).toBe(422); // unknown account
    expect(await status({ base_url: "ftp://example.com/v1" })).toBe(400);
    expect(await status({ base_url: "not a url" })).toBe(400);
    expect(await status({ provider: "other" })).toBe(400);
    expect(await status({ pricing: { input_units_per_mtok: -1, output_units_per_mtok: 1 } })).toBe(400);
    expect(await status({ surprise: true })).toBe(400);
    expect((await call(stack.edgeUrl, "GET", "/console/services", { token: c.token })).body.data).toHaveLength(1);
  });
});

describe("compatible routes on a byok instance, through the official SDK", () => {
  it("list the provider's models, answer chat and streams in the provider's shape with the customer's key, and leave the balance alone", async () => {
    const c = await withByok("compat");
    const before = await balance(stack, c);
    const client = sdk(stack, c, "compat");
    provider.reset();

    const models = await client.models.list();
    expect(models.data.map((m) => m.id)).toEqual(["mock-small", "mock-large"]);
    expect(models.data[0]).toMatchObject({ owned_by: "mock-provider" });

    const { data, response } = await client.chat.completions.create({ model: "mock-small", messages, max_tokens: 40, temperature: 0.3 }).withResponse();
    expect(data).toMatchObject({ object: "chat.completion", model: "mock-small", choices: [{ message: { content: "Mock reply to: Hello from my own key" } }] });
    const sent = provider.requests.at(-1)!;
    expect(sent.headers.authorization).toBe(`Bearer ${CUSTOMER_KEY}`);
    expect(sent.body).toMatchObject({ model: "mock-small", max_tokens: 40, temperature: 0.3, messages });
    expect(sent.body).not.toHaveProperty("max_cost");
    const estimate = expectedCost(inputBound(messages), 40n, PRICE);
    const cost = expectedCost(BigInt(data.usage!.prompt_tokens), BigInt(data.usage!.completion_tokens), PRICE);
    expect(response.headers.get("x-service-estimated-cost")).toBe(usd(estimate));
    expect(response.headers.get("x-service-final-cost")).toBe(usd(cost));
    expect(response.headers.get("x-service-total-tokens")).toBe(String(data.usage!.total_tokens));
    expect(response.headers.get("x-service-price-version")).toBeNull();

    // Parameters managed models refuse pass through to the customer's provider.
    await client.chat.completions.create({
      model: "mock-large",
      messages,
      max_completion_tokens: 12,
      tools: [{ type: "function", function: { name: "f", parameters: {} } }],
    });
    expect(provider.requests.at(-1)!.body).toMatchObject({ model: "mock-large", max_completion_tokens: 12, tools: [{ type: "function" }] });
    expect(provider.requests.at(-1)!.body).not.toHaveProperty("max_tokens");

    const { data: stream, response: streamed } = await client.chat.completions
      .create({ model: "mock-small", messages, max_tokens: 30, stream: true })
      .withResponse();
    expect(streamed.headers.get("x-service-estimated-cost")).toBe(usd(expectedCost(inputBound(messages), 30n, PRICE)));
    expect(streamed.headers.get("x-service-final-cost")).toBeNull();
    let text = "";
    let sawUsage = false;
    for await (const chunk of stream) {
      expect(chunk.model).toBe("mock-small");
      text += chunk.choices[0]?.delta?.content ?? "";
      if (chunk.usage) sawUsage = true;
    }
    expect(text).toBe("Mock reply to: Hello from my own key");
    expect(sawUsage).toBe(false); // not asked for by the client
    expect(provider.requests.at(-1)!.body).toMatchObject({ stream: true, stream_options: { include_usage: true } });

    const embedded = await client.embeddings.create({ model: "mock-embed", input: ["alpha", "beta"] });
    expect(embedded.data).toHaveLength(2);
    expect(embedded.data[1]!.embedding.map((f) => Math.round(f * 1e4))).toEqual(embeddingOf("beta").map((f) => Math.round(f * 1e4)));
    expect(embedded.usage).toEqual({
      prompt_tokens: embeddingTokens("alpha") + embeddingTokens("beta"),
      total_tokens: embeddingTokens("alpha") + embeddingTokens("beta"),
    });
    expect(provider.requests.at(-1)!).toMatchObject({ path: "/v1/embeddings", headers: { authorization: `Bearer ${CUSTOMER_KEY}` } });

    expect(provider.requests.every((r) => r.headers.authorization === `Bearer ${CUSTOMER_KEY}`)).toBe(true);
    expect(await balance(stack, c)).toEqual(before);
    expect(await usageRecords(c.tenantId)).toBe(0);
    expect(await usageRecords(c.tenantId, "byok")).toBe(4); // two chats, a stream, embeddings
  });

  it("answer provider failures as the contract's errors, never with the key", async () => {
    const c = await withByok("failing");
    provider.set({ failStatus: 500 });
    try {
      const res = await fetch(`${stack.edgeUrl}/v1/apps/ai/failing/v1/chat/completions`, {
        method: "POST",
        headers: { "x-api-key": c.key, "content-type": "application/json" },
        body: JSON.stringify({ messages }),
      });
      const text = await res.text();
      expect(res.status).toBe(502);
      expect(JSON.parse(text)).toMatchObject({ error: "upstream_error" });
      expect(text).not.toContain(CUSTOMER_KEY);
    } finally {
      provider.reset();
    }
    // A wrong key at the provider is the provider's 401, answered as 502 without echoing anything.
    const wrong = await byokInstance(stack, c, "wrong-key", provider, { api_key: "sk-not-the-right-one" });
    expect(wrong.status).toBe(201);
    const denied = await call(stack.edgeUrl, "POST", "/v1/apps/ai/wrong-key/chat", { headers: { "x-api-key": c.key }, body: { messages } });
    expect(denied.status).toBe(502);
    expect(JSON.stringify(denied.body)).not.toContain("sk-not-the-right-one");
  });
});

describe("a byok stream whose client leaves", () => {
  it("is read to its end and its usage recorded, as a managed one is (0177), and every process keeps running", async () => {
    const c = await withByok("leaving");
    provider.reset();
    provider.set({ chunkDelayMs: 100 });
    let requestId = "";
    try {
      const controller = new AbortController();
      const res = await fetch(`${stack.edgeUrl}/v1/apps/ai/leaving/chat/stream`, {
        method: "POST",
        headers: { "x-api-key": c.key, "content-type": "application/json" },
        body: JSON.stringify({ messages: [{ role: "user", content: "one two three four five six seven eight nine ten" }] }),
        signal: controller.signal,
      });
      requestId = res.headers.get("x-request-id")!;
      const reader = res.body!.getReader();
      await reader.read();
      controller.abort();
      const record = await eventually(
        async () =>
          (
            await stack.sql<{ status: string; usage_json: string | null; hold_id: string | null }>(
              "managed-ai",
              "SELECT status, usage_json, hold_id FROM usage_records WHERE id = $1",
              [requestId],
            )
          )[0],
        (r) => r?.status === "completed",
        10_000,
      );
      expect(record).toMatchObject({ status: "completed", hold_id: null });
      expect(record?.usage_json).toBeTruthy();
      expect(provider.abandoned).toEqual([]);
    } finally {
      provider.reset();
    }
    expect(stack.process("managed-ai").running && stack.process("edge").running).toBe(true);
    const after = await call(stack.edgeUrl, "POST", "/v1/apps/ai/leaving/chat", { headers: { "x-api-key": c.key }, body: { messages } });
    expect(after.status).toBe(200);
  });
});

describe("native routes on a byok instance", () => {
  it("chat, stream and embeddings answer the gateway's shape, priced from config.pricing, charging nothing", async () => {
    const c = await withByok("native");
    const before = await balance(stack, c);
    const headers = { "x-api-key": c.key };

    const chat = await call(stack.edgeUrl, "POST", "/v1/apps/ai/native/chat", { headers, body: { messages, max_tokens: 25 } });
    expect(chat.status).toBe(200);
    const prompt = promptTokens(messages);
    expect(chat.body).toEqual({
      data: {
        id: expect.stringMatching(/^chatcmpl-mock-/),
        model: "mock-small",
        content: "Mock reply to: Hello from my own key",
        finish_reason: "stop",
        usage: { prompt_tokens: prompt, completion_tokens: expect.any(Number), total_tokens: expect.any(Number) },
      },
    });
    const usage = chat.body.data.usage;
    expect(chat.headers.get("x-service-estimated-cost")).toBe(usd(expectedCost(inputBound(messages), 25n, PRICE)));
    expect(chat.headers.get("x-service-final-cost")).toBe(usd(expectedCost(BigInt(usage.prompt_tokens), BigInt(usage.completion_tokens), PRICE)));
    expect(chat.headers.get("x-service-total-tokens")).toBe(String(usage.total_tokens));

    const stream = await fetch(`${stack.edgeUrl}/v1/apps/ai/native/chat/stream`, {
      method: "POST",
      headers: { ...headers, "content-type": "application/json" },
      body: JSON.stringify({ messages, max_tokens: 25 }),
    });
    expect(stream.status).toBe(200);
    expect(stream.headers.get("x-service-estimated-cost")).toBe(usd(expectedCost(inputBound(messages), 25n, PRICE)));
    expect(stream.headers.get("x-service-final-cost")).toBeNull();
    const events = sseData(await stream.text());
    expect(events.at(-1)).toBe("[DONE]");
    const parsed = events.slice(0, -1).map((e) => JSON.parse(e));
    expect(parsed.slice(0, -1).every((e) => Object.keys(e).join() === "delta")).toBe(true);
    expect(
      parsed
        .slice(0, -1)
        .map((e) => e.delta)
        .join(""),
    ).toBe("Mock reply to: Hello from my own key");
    expect(parsed.at(-1)).toEqual({ finish_reason: "stop", usage });

    const emb = await call(stack.edgeUrl, "POST", "/v1/apps/ai/native/embeddings", { headers, body: { input: ["one", "two three"], model: "mock-embed" } });
    expect(emb.status).toBe(200);
    const tokens = embeddingTokens("one") + embeddingTokens("two three");
    expect(emb.body).toEqual({
      data: { model: "mock-embed", embeddings: [embeddingOf("one"), embeddingOf("two three")], usage: { prompt_tokens: tokens, total_tokens: tokens } },
    });
    expect(emb.headers.get("x-service-final-cost")).toBe(usd(expectedCost(BigInt(tokens), 0n, PRICE)));
    const single = await call(stack.edgeUrl, "POST", "/v1/apps/ai/native/embeddings", { headers, body: { input: "solo" } });
    expect(single.body.data.embeddings).toEqual([embeddingOf("solo")]);
    expect(provider.requests.at(-1)!.body).toMatchObject({ model: "mock-small", input: "solo" });

    expect((await call(stack.edgeUrl, "POST", "/v1/apps/ai/native/chat", { headers, body: { messages: [] } })).status).toBe(400);
    expect((await call(stack.edgeUrl, "POST", "/v1/apps/ai/native/embeddings", { headers, body: { input: [] } })).status).toBe(400);
    expect(await balance(stack, c)).toEqual(before);
    expect(await usageRecords(c.tenantId)).toBe(0);
    expect(await usageRecords(c.tenantId, "byok")).toBe(4); // chat, stream, two embeddings; the refused ones none
  });

  it("without pricing report 0.0000", async () => {
    const c = await tenantWithKey(stack, op);
    expect((await byokInstance(stack, c, "free", provider)).status).toBe(201);
    const chat = await call(stack.edgeUrl, "POST", "/v1/apps/ai/free/chat", { headers: { "x-api-key": c.key }, body: { messages } });
    expect(chat.status).toBe(200);
    expect(chat.headers.get("x-service-estimated-cost")).toBe("0.0000");
    expect(chat.headers.get("x-service-final-cost")).toBe("0.0000");
  });
});

describe("caps and ceilings on byok instances", () => {
  it("refuse max_tokens above max_tokens_per_request (400) and worst cases above max_cost or max_cost_per_request (409), without a provider call", async () => {
    const c = await withByok("capped", { max_tokens_per_request: 50 });
    const headers = { "x-api-key": c.key };
    provider.reset();
    const over = await call(stack.edgeUrl, "POST", "/v1/apps/ai/capped/v1/chat/completions", { headers, body: { messages, max_tokens: 51 } });
    expect(over.status).toBe(400);
    expect(over.body).toMatchObject({ error: "invalid_request", param: "max_tokens" });
    expect(over.body.message).toContain("max_tokens_per_request");

    // Without max_tokens the instance's cap is the cap, sent to the provider and priced.
    const estimate = expectedCost(inputBound(messages), 50n, PRICE);
    const ceiling = Number(usd(estimate - 1n));
    const refused = await call(stack.edgeUrl, "POST", "/v1/apps/ai/capped/chat", { headers, body: { messages, max_cost: ceiling } });
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({ error: "conflict", pricing: { cost: Number(usd(estimate)) } });
    const streamRefused = await call(stack.edgeUrl, "POST", "/v1/apps/ai/capped/chat/stream", { headers, body: { messages, max_cost: ceiling } });
    expect(streamRefused.status).toBe(409);
    expect(provider.requests).toHaveLength(0);

    const allowed = await call(stack.edgeUrl, "POST", "/v1/apps/ai/capped/chat", { headers, body: { messages, max_cost: Number(usd(estimate)) } });
    expect(allowed.status).toBe(200);
    expect(provider.requests.at(-1)!.body).toMatchObject({ max_tokens: 50 });

    expect(
      (await byokInstance(stack, c, "capped", provider, { max_tokens_per_request: 50, pricing: PRICING, max_cost_per_request: Number(usd(estimate - 1n)) }))
        .status,
    ).toBe(201);
    provider.reset();
    const instanceCeiling = await call(stack.edgeUrl, "POST", "/v1/apps/ai/capped/v1/chat/completions", { headers, body: { messages } });
    expect(instanceCeiling.status).toBe(409);
    expect(instanceCeiling.body.pricing).toEqual({ cost: Number(usd(estimate)) });
    expect(instanceCeiling.body.message).toContain("max_cost_per_request");
    const embeddingCeiling = await call(stack.edgeUrl, "POST", "/v1/apps/ai/capped/embeddings", {
      headers,
      body: { input: "x".repeat(10_000), max_cost: 0.0001 },
    });
    expect(embeddingCeiling.status).toBe(409);
    expect(provider.requests).toHaveLength(0);
  });
});

describe("connected accounts", () => {
  it("store a secret encrypted, never return it, serve a byok instance, and are deleted only when unused", async () => {
    const c = await tenantWithKey(stack, op);
    const other = await tenantWithKey(stack, op);
    const res = await fetch(`${stack.edgeUrl}/console/connected-accounts`, {
      method: "POST",
      headers: { authorization: `Bearer ${c.token}`, "content-type": "application/json" },
      body: JSON.stringify({ provider: "openai", name: "My OpenAI", secret: ACCOUNT_SECRET }),
    });
    const raw = await res.text();
    expect(res.status).toBe(201);
    expect(raw).not.toContain(ACCOUNT_SECRET);
    const account = JSON.parse(raw).data;
    expect(account).toEqual({ id: expect.stringMatching(/^acct_/), provider: "openai", name: "My OpenAI", created_at: expect.stringMatching(/Z$/) });

    const list = await call(stack.edgeUrl, "GET", "/console/connected-accounts", { token: c.token });
    expect(list.body.data).toEqual([account]);
    expect((await call(stack.edgeUrl, "GET", "/console/connected-accounts", { token: other.token })).body.data).toEqual([]);
    const [row] = await stack.sql<{ secret_ciphertext: Buffer }>("managed-ai", "SELECT secret_ciphertext FROM connected_accounts WHERE id = $1", [account.id]);
    expect(row!.secret_ciphertext.includes(Buffer.from(ACCOUNT_SECRET))).toBe(false);

    // Another tenant cannot use or delete it; a bad body is 400.
    expect((await byokInstance(stack, other, "theirs", provider, { api_key: undefined }, { connected_account_id: account.id })).status).toBe(422);
    expect((await call(stack.edgeUrl, "DELETE", `/console/connected-accounts/${account.id}`, { token: other.token })).status).toBe(404);
    expect((await call(stack.edgeUrl, "POST", "/console/connected-accounts", { token: c.token, body: { provider: "openai", name: "x" } })).status).toBe(400);
    const telegram = await call(stack.edgeUrl, "POST", "/console/connected-accounts", {
      token: c.token,
      body: { provider: "telegram", name: "bot", secret: "123:abc" },
    });
    expect(telegram.status).toBe(201);
    expect((await byokInstance(stack, c, "wrong-kind", provider, { api_key: undefined }, { connected_account_id: telegram.body.data.id })).status).toBe(422);

    // A byok instance on the account: the provider sees the account's secret.
    const accountProvider = await customerProvider(ACCOUNT_SECRET);
    try {
      const created = await byokInstance(stack, c, "via-account", accountProvider, { api_key: undefined }, { connected_account_id: account.id });
      expect(created.status).toBe(201);
      expect(created.body.data).toMatchObject({ connected_account_id: account.id, config: { api_key: null } });
      const answer = await sdk(stack, c, "via-account").chat.completions.create({ model: "mock-small", messages });
      expect(answer.choices[0]!.message.content).toBe("Mock reply to: Hello from my own key");
      expect(accountProvider.requests.at(-1)!.headers.authorization).toBe(`Bearer ${ACCOUNT_SECRET}`);

      // In use: kept. Pointed elsewhere: deleted, gone from the list, and no longer usable.
      const inUse = await call(stack.edgeUrl, "DELETE", `/console/connected-accounts/${account.id}`, { token: c.token });
      expect(inUse.status).toBe(409);
      expect((await byokInstance(stack, c, "via-account", provider)).status).toBe(201);
      expect((await call(stack.edgeUrl, "DELETE", `/console/connected-accounts/${account.id}`, { token: c.token })).status).toBe(204);
      expect((await call(stack.edgeUrl, "DELETE", `/console/connected-accounts/${account.id}`, { token: c.token })).status).toBe(404);
      expect((await call(stack.edgeUrl, "GET", "/console/connected-accounts", { token: c.token })).body.data.map((a: { id: string }) => a.id)).toEqual([
        telegram.body.data.id,
      ]);
      expect((await byokInstance(stack, c, "late", provider, { api_key: undefined }, { connected_account_id: account.id })).status).toBe(422);
    } finally {
      await accountProvider.close();
    }
  });

  it("reveal their secret to other services over gRPC only for the owning tenant", async () => {
    const c = await tenantWithKey(stack, op);
    const other = await tenantWithKey(stack, op);
    const created = await call(stack.edgeUrl, "POST", "/console/connected-accounts", {
      token: c.token,
      body: { provider: "telegram", name: "bot", secret: "123456:bot-token-SECRET" },
    });
    const id = created.body.data.id as string;
    const client = createClient(managedAiV1, stack.address("managed-ai"), {
      deadlineMs: 5_000,
      name: "managed-ai",
      serviceToken: stack.serviceToken,
      tls: stack.tls,
    });
    try {
      expect(await client.RevealConnectedAccount({ tenant_id: c.tenantId, id })).toEqual({ id, provider: "telegram", secret: "123456:bot-token-SECRET" });
      await expect(client.RevealConnectedAccount({ tenant_id: other.tenantId, id })).rejects.toMatchObject({ code: "not_found" });
      await expect(client.RevealConnectedAccount({ tenant_id: c.tenantId, id: "acct_unknown" })).rejects.toMatchObject({ code: "not_found" });
    } finally {
      client.close();
    }
    // Never through the edge.
    const openapi = await call(stack.edgeUrl, "GET", "/openapi.json");
    expect(JSON.stringify(openapi.body)).not.toMatch(/reveal/i);
  });
});

describe("secrets", () => {
  it("never appear in any service's logs or in any event", async () => {
    // Every event so far has reached the audit trail.
    const audit = await eventually(
      () => stack.sql<{ type: string; data: unknown }>("jobs", "SELECT type, data FROM audit_events"),
      (rows) =>
        rows.some((r) => r.type === "managed_ai.byok_instance_changed") &&
        rows.some((r) => r.type === "managed_ai.connected_account_changed" && (r.data as { change: string }).change === "deleted"),
      20_000,
    );
    const secrets = [CUSTOMER_KEY, ACCOUNT_SECRET, "123456:bot-token-SECRET", "sk-not-the-right-one"];
    const events = JSON.stringify(audit);
    for (const secret of secrets) expect(events).not.toContain(secret);
    const outbox = JSON.stringify(await stack.sql("managed-ai", "SELECT payload FROM outbox_events"));
    for (const secret of secrets) expect(outbox).not.toContain(secret);
    for (const service of ["edge", "managed-ai", "ledger", "jobs"] as const) {
      const logs = JSON.stringify(stack.logs(service));
      expect(logs.length).toBeGreaterThan(1000);
      for (const secret of secrets) expect(logs, service).not.toContain(secret);
    }
  });
});
