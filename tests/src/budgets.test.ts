import { beforeAll, describe, expect, it } from "vitest";
import type { MockProvider } from "@gateway/mock-provider";
import { call, type Stack } from "@gateway/testkit";
import { byokInstance, customerProvider, tenantWithKey } from "./support/byok.js";
import { WebhookReceiver } from "./support/receivers.js";
import { balance, customer, expectedCost, inputBound, meteredStack, type ManagedModel, type Operator } from "./support/managed-ai.js";

// Spend budgets (CONTRACT.md section 3b, docs/decisions/0024) and byok usage records (0025).
let stack: Stack;
let provider: MockProvider;
let op: Operator;
let model: ManagedModel;
// byok instances and push targets point at local mock servers.
const metered = meteredStack({ env: { "managed-ai": { ALLOW_PRIVATE_TARGETS: "true" }, messaging: { ALLOW_PRIVATE_TARGETS: "true" } } });
beforeAll(() => {
  ({ stack, provider, op, model } = metered);
});

const messages = [{ role: "user" as const, content: "Spend a little" }];
const MAX_TOKENS = 20n;

type Budget = { scope?: string; limit_units: number; spent_units: number; reserved_units: number; period: string; resets_at: string };

function chat(baseUrl: string, key: string, alias: string, body: Record<string, unknown> = {}) {
  return fetch(`${baseUrl}/v1/apps/ai/${alias}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": key },
    body: JSON.stringify({ messages, max_tokens: Number(MAX_TOKENS), ...body }),
  });
}

async function keyBudget(token: string, keyId: string): Promise<Budget | null> {
  const res = await call<{ data: { id: string; budget: Budget | null }[] }>(stack.edgeUrl, "GET", "/console/keys", { token });
  expect(res.status).toBe(200);
  return res.body.data.find((k) => k.id === keyId)!.budget;
}

async function chargedByKey(keyId: string): Promise<bigint> {
  const rows = await stack.sql<{ sum: string | null }>("managed-ai", "SELECT sum(final_units)::text AS sum FROM usage_records WHERE api_key_id = $1", [keyId]);
  return BigInt(rows[0]?.sum ?? "0");
}

describe("key budgets on managed calls", () => {
  // A second edge in front of a second managed-ai: budgets hold across replicas of both.
  let edge2: string;
  beforeAll(async () => {
    const managedAi2 = await stack.addReplica("managed-ai", "managed-ai-2");
    edge2 = await stack.addEdge("edge-2", { MANAGED_AI_GRPC_URL: managedAi2 });
  });

  it("never spend past the budget under concurrency, and refused requests reach no provider", async () => {
    const reservation = expectedCost(inputBound(messages), MAX_TOKENS, model);
    const limit = Number(reservation) * 5 + 1; // room for five reservations at once
    const c = await customer(stack, op, { units: 10_000_000, alias: "chat", defaultModel: "small", keyPolicy: { budget_units: limit, budget_period: "day" } });
    expect(await keyBudget(c.token, c.keyId)).toMatchObject({ limit_units: limit, spent_units: 0, period: "day" });

    const before = provider.requests.length;
    const answers = await Promise.all(Array.from({ length: 24 }, (_, i) => chat(i % 2 === 0 ? stack.edgeUrl : edge2, c.key, "chat")));
    const ok = answers.filter((r) => r.status === 200);
    const refused = answers.filter((r) => r.status === 409);
    expect(ok.length + refused.length).toBe(24);
    expect(ok.length).toBeGreaterThanOrEqual(5);
    expect(refused.length).toBeGreaterThan(0);
    // Exactly the admitted requests called the provider.
    expect(provider.requests.length - before).toBe(ok.length);
    for (const res of refused) {
      const body = (await res.json()) as { error: string; budget: Budget };
      expect(body.error).toBe("conflict");
      expect(body.budget).toMatchObject({ scope: "key", limit_units: limit, period: "day" });
      expect(Date.parse(body.budget.resets_at)).toBeGreaterThan(Date.now());
    }
    for (const res of ok) await res.arrayBuffer();
    const spent = await chargedByKey(c.keyId);
    expect(spent).toBeLessThanOrEqual(BigInt(limit));
    expect(await keyBudget(c.token, c.keyId)).toMatchObject({ limit_units: limit, spent_units: Number(spent), reserved_units: 0 });
    // The balance was charged exactly what the budget counts.
    expect((await balance(stack, c)).available_units).toBe(10_000_000 - Number(spent));
    // A rotation keeps the key's budget and its spending.
    const rotated = await call<{ data: { budget: Budget } }>(stack.edgeUrl, "POST", `/console/keys/${c.keyId}/rotate`, { token: c.token });
    expect(rotated.status).toBe(200);
    expect(rotated.body.data.budget).toMatchObject({ limit_units: limit, spent_units: Number(spent) });
  });

  it("a budget lowered below what is spent refuses the next request at once on two replicas", async () => {
    const c = await customer(stack, op, {
      units: 10_000_000,
      alias: "chat",
      defaultModel: "small",
      keyPolicy: { budget_units: 1_000_000, budget_period: "month" },
    });
    expect((await chat(stack.edgeUrl, c.key, "chat")).status).toBe(200);
    expect((await chat(edge2, c.key, "chat")).status).toBe(200); // both replicas have the key cached
    const spent = Number(await chargedByKey(c.keyId));
    expect(spent).toBeGreaterThan(0);

    const patched = await call<{ data: { budget: Budget } }>(stack.edgeUrl, "PATCH", `/console/keys/${c.keyId}`, {
      token: c.token,
      body: { budget_units: 1, budget_period: "month" },
    });
    expect(patched.status).toBe(200);
    expect(patched.body.data.budget).toMatchObject({ limit_units: 1, spent_units: spent, period: "month" });
    const before = provider.requests.length;
    for (const base of [edge2, stack.edgeUrl]) {
      const res = await chat(base, c.key, "chat");
      expect(res.status).toBe(409);
      expect(((await res.json()) as { budget: Budget }).budget).toMatchObject({ scope: "key", limit_units: 1, spent_units: spent });
    }
    expect(provider.requests.length).toBe(before);

    // Removing the budget lets requests through again.
    expect((await call(stack.edgeUrl, "PATCH", `/console/keys/${c.keyId}`, { token: c.token, body: { budget_units: null, budget_period: null } })).status).toBe(
      200,
    );
    expect((await chat(edge2, c.key, "chat")).status).toBe(200);
    expect(await keyBudget(c.token, c.keyId)).toBeNull();
  });

  it("refuses a budget without its period, and an unknown period, with 400", async () => {
    const c = await customer(stack, op, { units: 0, alias: "chat", defaultModel: "small" });
    for (const body of [
      { budget_units: 10 },
      { budget_period: "day" },
      { budget_units: 10, budget_period: "week" },
      { budget_units: 0, budget_period: "day" },
    ]) {
      const res = await call<{ error: string }>(stack.edgeUrl, "POST", "/console/keys", { token: c.token, body: { scopes: ["ai:invoke"], ...body } });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error).toBe("invalid_request");
    }
    const res = await call(stack.edgeUrl, "PATCH", `/console/keys/${c.keyId}`, { token: c.token, body: { budget_units: 5 } });
    expect(res.status).toBe(400);
  });
});

describe("instance budgets", () => {
  it("count every key's requests, show on the instance view, and take a lowered limit at once", async () => {
    const reservation = Number(expectedCost(inputBound(messages), MAX_TOKENS, model));
    const c = await customer(stack, op, {
      units: 10_000_000,
      alias: "capped",
      defaultModel: "small",
      config: { budget_units: reservation * 2, budget_period: "month" },
    });
    expect((await chat(stack.edgeUrl, c.key, "capped")).status).toBe(200);
    const list = await call<{ data: { alias: string; config: Record<string, unknown>; budget: Budget | null }[] }>(stack.edgeUrl, "GET", "/console/services", {
      token: c.token,
    });
    const view = list.body.data.find((i) => i.alias === "capped")!;
    expect(view.config).toMatchObject({ budget_units: reservation * 2, budget_period: "month" });
    const spent = view.budget!.spent_units;
    expect(view.budget).toMatchObject({ limit_units: reservation * 2, period: "month", reserved_units: 0 });
    expect(spent).toBeGreaterThan(0);

    const lowered = await call<{ data: { budget: Budget } }>(stack.edgeUrl, "POST", "/console/services", {
      token: c.token,
      body: {
        service_id: "ai-model",
        alias: "capped",
        status: "active",
        config: { mode: "managed", default_model: "small", budget_units: 1, budget_period: "month" },
      },
    });
    expect(lowered.status).toBe(201);
    expect(lowered.body.data.budget).toMatchObject({ limit_units: 1, spent_units: spent });
    const res = await chat(stack.edgeUrl, c.key, "capped");
    expect(res.status).toBe(409);
    expect(((await res.json()) as { budget: Budget }).budget).toMatchObject({ scope: "instance", limit_units: 1, spent_units: spent, period: "month" });
  });
});

describe("byok usage records", () => {
  let customerApi: MockProvider;
  beforeAll(async () => {
    customerApi = await customerProvider();
    return () => customerApi.close();
  });

  it("record every byok call with its exact cost at the instance's pricing, charge nothing, and count against budgets", async () => {
    const c = await tenantWithKey(stack, op);
    const pricing = { input_units_per_mtok: 3_000_000, output_units_per_mtok: 7_000_000 }; // 3 and 7 units per token
    expect((await byokInstance(stack, c, "mine", customerApi, { pricing, budget_units: 100_000, budget_period: "day" })).status).toBe(201);
    const before = await balance(stack, c);
    const res = await chat(stack.edgeUrl, c.key, "mine");
    expect(res.status).toBe(200);
    const requestId = res.headers.get("x-request-id")!;
    const answer = (await res.json()) as { usage: { prompt_tokens: number; completion_tokens: number } };
    const cost = answer.usage.prompt_tokens * 3 + answer.usage.completion_tokens * 7;
    expect(res.headers.get("x-service-final-cost")).toBe((cost / 10_000).toFixed(4));

    // Never charged, so not among the managed records the list gives by default (CONTRACT.md section 13).
    type Listed = { data: { id: string; mode: string; api_key_id: string; status: string; final_units: number; usage_json: string }[] };
    const managed = await call<Listed>(stack.edgeUrl, "GET", "/console/services/managed-ai/usage", { token: c.token });
    expect(managed.body.data.find((r) => r.id === requestId)).toBeUndefined();
    const usage = await call<Listed>(stack.edgeUrl, "GET", "/console/services/managed-ai/usage?mode=byok", { token: c.token });
    const record = usage.body.data.find((r) => r.id === requestId);
    expect(record).toMatchObject({ mode: "byok", api_key_id: c.keyId, status: "completed", final_units: cost });
    expect(JSON.parse(record!.usage_json)).toMatchObject(answer.usage);
    expect(await balance(stack, c)).toEqual(before);

    const list = await call<{ data: { alias: string; budget: Budget | null }[] }>(stack.edgeUrl, "GET", "/console/services", { token: c.token });
    expect(list.body.data.find((i) => i.alias === "mine")!.budget).toMatchObject({ limit_units: 100_000, spent_units: cost, reserved_units: 0 });
  });
});

describe("push sends", () => {
  let hooks: WebhookReceiver;
  beforeAll(async () => {
    hooks = await new WebhookReceiver().start();
    return () => hooks.close();
  });

  it("count against the push instance's and the key's budgets, exactly under concurrency, and refused sends reach no target", async () => {
    const c = await tenantWithKey(stack, op);
    const targets = ["a", "b", "c"].map((id) => ({ id, type: "webhook", url: `${hooks.url}/budget/${id}`, enabled: true }));
    const created = await call<{ data: { budget: Budget | null } }>(stack.edgeUrl, "POST", "/console/services", {
      token: c.token,
      body: { service_id: "webhook-push", alias: "alerts", status: "active", config: { targets, budget_units: 7, budget_period: "day" } },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.data.budget).toMatchObject({ limit_units: 7, spent_units: 0, period: "day" });
    const key = await call<{ data: { key: string; id: string } }>(stack.edgeUrl, "POST", "/console/keys", {
      token: c.token,
      body: { scopes: ["push:send"], budget_units: 100, budget_period: "month" },
    });
    const send = () =>
      call<{ error?: string; budget?: Budget }>(stack.edgeUrl, "POST", "/v1/apps/webhook-push/alerts/send", {
        headers: { "x-api-key": key.body.data.key },
        body: { title: "t", text: "x" },
      });
    const before = await balance(stack, c);
    const received = hooks.received.length;

    // Each send reserves 3 targets × 1 unit: two fit in 7, the others are refused.
    const answers = await Promise.all(Array.from({ length: 8 }, send));
    expect(answers.filter((a) => a.status === 200)).toHaveLength(2);
    const refused = answers.filter((a) => a.status === 409);
    expect(refused).toHaveLength(6);
    for (const r of refused) expect(r.body.budget).toMatchObject({ scope: "instance", limit_units: 7, period: "day" });
    expect(hooks.received.length - received).toBe(6); // two sends × three targets, nothing for the refused ones
    expect(await balance(stack, c)).toEqual({ available_units: before.available_units - 6, reserved_units: 0 });

    const list = await call<{ data: { alias: string; service_id: string; budget: Budget | null }[] }>(stack.edgeUrl, "GET", "/console/services", {
      token: c.token,
    });
    expect(list.body.data.find((i) => i.service_id === "webhook-push")!.budget).toMatchObject({ limit_units: 7, spent_units: 6, reserved_units: 0 });
    expect(await keyBudget(c.token, key.body.data.id)).toMatchObject({ limit_units: 100, spent_units: 6, reserved_units: 0, period: "month" });
  });
});

describe("the OpenAPI document", () => {
  it("describes budgets on keys, instances and usage records, and the key PATCH", async () => {
    const res = await call<{ paths: Record<string, Record<string, any>> }>(stack.edgeUrl, "GET", "/openapi.json");
    const schemaOf = (path: string, method: string, status: string) => res.body.paths[path]![method].responses[status].content["application/json"].schema;
    const create = res.body.paths["/console/keys"]!.post.requestBody.content["application/json"].schema;
    expect(create.properties).toHaveProperty("budget_units");
    expect(create.properties.budget_period.enum).toEqual(["day", "month"]);
    const item = schemaOf("/console/keys", "get", "200").properties.data.items;
    expect(item.properties.budget).toBeDefined();
    expect(JSON.stringify(item.properties.budget)).toContain("resets_at");
    expect(res.body.paths["/console/keys/{id}"]!.patch.requestBody.content["application/json"].schema.properties).toHaveProperty("budget_units");
    expect(JSON.stringify(schemaOf("/console/services", "get", "200"))).toContain("spent_units");
    expect(JSON.stringify(schemaOf("/console/services/managed-ai/usage", "get", "200"))).toContain("byok");
  });
});
