import { beforeAll, describe, expect, it } from "vitest";
import type { MockProvider } from "@gateway/mock-provider";
import { promptTokens } from "@gateway/mock-provider";
import { call, type Stack } from "@gateway/testkit";
import { balance, customer, expectedCost, inputBound, meteredStack, sdk, usageRecord, usd, type ManagedModel, type Operator } from "./support/managed-ai.js";
import { eventually } from "./support/operators.js";

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
  { role: "user" as const, content: "Say hello to the ledger" },
];

describe("metered JSON completions through the official SDK", () => {
  it("reserve the worst case, call the provider with the cap, charge the exact cost rounded up, release the rest", async () => {
    const c = await customer(stack, op, { units: 1_000_000, alias: "chat", defaultModel: "small" });
    const before = await balance(stack, c);
    const { data, response } = await sdk(stack, c, "chat").chat.completions.create({ model: "small", messages, max_tokens: 50 }).withResponse();

    // The provider was called once, with the upstream model and the effective cap.
    const sent = provider.requests.at(-1)!;
    expect(sent.body).toMatchObject({ model: "mock-small", max_tokens: 50, messages });
    expect(data.model).toBe("small");
    expect(data.usage!.prompt_tokens).toBe(promptTokens(messages));

    const reservation = expectedCost(inputBound(messages), 50n, model);
    const charge = expectedCost(BigInt(data.usage!.prompt_tokens), BigInt(data.usage!.completion_tokens), model);
    expect(charge * 10_000n * 1_000_000n).not.toBe(
      (BigInt(data.usage!.prompt_tokens) * 150_000_007n + BigInt(data.usage!.completion_tokens) * 600_000_011n) * 10_000n,
    ); // not whole: rounding mattered
    const requestId = response.headers.get("x-request-id")!;
    expect(response.headers.get("x-service-price-version")).toBe(model.priceId);
    expect(response.headers.get("x-service-estimated-cost")).toBe(usd(reservation));
    expect(response.headers.get("x-service-final-cost")).toBe(usd(charge));
    expect(response.headers.get("x-service-final-cost")).toMatch(/^\d+\.\d{4}$/);

    const record = await usageRecord(stack, requestId);
    expect(record).toMatchObject({ status: "completed", reserved_units: reservation.toString(), final_units: charge.toString(), error_code: null });
    expect(JSON.parse(record!.usage_json!)).toMatchObject({ prompt_tokens: data.usage!.prompt_tokens, completion_tokens: data.usage!.completion_tokens });

    const after = await balance(stack, c);
    expect(after).toEqual({ available_units: before.available_units - Number(charge), reserved_units: 0 });
  });

  it("apply the tenant's discount in the formula", async () => {
    const c = await customer(stack, op, { units: 1_000_000, alias: "chat", defaultModel: "small" });
    const offer = await call(stack.edgeUrl, "PUT", "/ops/ai/discounts", {
      token: op.token,
      body: { tenant_id: c.tenantId, model_alias: "small", discount_bps: 2_500 },
    });
    expect(offer.status).toBe(200);
    const { data, response } = await sdk(stack, c, "chat").chat.completions.create({ model: "small", messages, max_tokens: 40 }).withResponse();
    const charge = expectedCost(BigInt(data.usage!.prompt_tokens), BigInt(data.usage!.completion_tokens), model, 2_500);
    expect(charge).toBeLessThan(expectedCost(BigInt(data.usage!.prompt_tokens), BigInt(data.usage!.completion_tokens), model));
    expect(response.headers.get("x-service-estimated-cost")).toBe(usd(expectedCost(inputBound(messages), 40n, model, 2_500)));
    expect(response.headers.get("x-service-final-cost")).toBe(usd(charge));
    expect((await balance(stack, c)).available_units).toBe(1_000_000 - Number(charge));
    // The customer's models view shows the list price and the discount apart.
    const view = await call(stack.edgeUrl, "GET", "/console/services/managed-ai/models", { token: c.token });
    expect(view.body.data).toContainEqual(expect.objectContaining({ alias: "small", price_id: model.priceId, discount_bps: 2_500 }));
  });

  it("cap the output at the smaller of the instance's and the model's limits when the request sets none", async () => {
    const c = await customer(stack, op, { units: 1_000_000, alias: "capped", defaultModel: "small", config: { max_tokens_per_request: 30 } });
    const { response } = await sdk(stack, c, "capped").chat.completions.create({ model: "small", messages }).withResponse();
    expect(provider.requests.at(-1)!.body).toMatchObject({ max_tokens: 30 });
    expect(response.headers.get("x-service-estimated-cost")).toBe(usd(expectedCost(inputBound(messages), 30n, model)));
  });

  it("list the instance's models in OpenAI's shape", async () => {
    const c = await customer(stack, op, { units: 0, alias: "listing", defaultModel: "small" });
    const page = await sdk(stack, c, "listing").models.list();
    expect(page.data.map((m) => m.id)).toContain("small");
    expect(page.data[0]).toMatchObject({ object: "model", owned_by: "gateway" });
  });
});

describe("metered streams through the official SDK", () => {
  it("pass events through, end with [DONE], and settle from the in-stream usage", async () => {
    const c = await customer(stack, op, { units: 1_000_000, alias: "chat", defaultModel: "small" });
    const { data: stream, response } = await sdk(stack, c, "chat")
      .chat.completions.create({ model: "small", messages, max_tokens: 60, stream: true, stream_options: { include_usage: true } })
      .withResponse();
    expect(response.headers.get("content-type")).toContain("text/event-stream");
    expect(response.headers.get("x-service-price-version")).toBe(model.priceId);
    expect(response.headers.get("x-service-estimated-cost")).toBe(usd(expectedCost(inputBound(messages), 60n, model)));
    expect(response.headers.get("x-service-final-cost")).toBeNull();
    let text = "";
    let usage: { prompt_tokens: number; completion_tokens: number } | undefined;
    for await (const chunk of stream) {
      expect(chunk.model).toBe("small");
      text += chunk.choices[0]?.delta?.content ?? "";
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe("Mock reply to: Say hello to the ledger");
    expect(provider.requests.at(-1)!.body).toMatchObject({ stream: true, stream_options: { include_usage: true }, max_tokens: 60 });
    const charge = expectedCost(BigInt(usage!.prompt_tokens), BigInt(usage!.completion_tokens), model);
    const record = await usageRecord(stack, response.headers.get("x-request-id")!);
    expect(record).toMatchObject({ status: "completed", final_units: charge.toString() });
    expect(await balance(stack, c)).toEqual({ available_units: 1_000_000 - Number(charge), reserved_units: 0 });
  });

  it("ask the provider for usage even when the client does not, without forwarding it", async () => {
    const c = await customer(stack, op, { units: 1_000_000, alias: "chat", defaultModel: "small" });
    const res = await fetch(`${stack.edgeUrl}/v1/apps/ai/chat/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": c.key },
      body: JSON.stringify({ messages, stream: true, max_tokens: 20 }),
    });
    const body = await res.text();
    expect(body.trimEnd().endsWith("data: [DONE]")).toBe(true);
    expect(body).not.toContain('"usage":{');
    expect(provider.requests.at(-1)!.body).toMatchObject({ stream_options: { include_usage: true } });
    const record = await usageRecord(stack, res.headers.get("x-request-id")!);
    expect(record!.status).toBe("completed");
  });
});

describe("usage records", () => {
  it("are owner-scoped for customers, complete for operators, and part of the request view", async () => {
    const a = await customer(stack, op, { units: 1_000_000, alias: "chat", defaultModel: "small" });
    const b = await customer(stack, op, { units: 1_000_000, alias: "chat", defaultModel: "small" });
    const ra = await sdk(stack, a, "chat").chat.completions.create({ model: "small", messages, max_tokens: 10 }).withResponse();
    const rb = await sdk(stack, b, "chat").chat.completions.create({ model: "small", messages, max_tokens: 10 }).withResponse();
    const idA = ra.response.headers.get("x-request-id")!;
    const idB = rb.response.headers.get("x-request-id")!;

    const mine = await call(stack.edgeUrl, "GET", "/console/services/managed-ai/usage", { token: a.token });
    expect(mine.body.data.map((r: { id: string }) => r.id)).toEqual([idA]);
    expect(mine.body.data[0]).toEqual({
      id: idA,
      mode: "managed",
      api_key_id: a.keyId,
      service_alias: "chat",
      model_alias: "small",
      price_id: model.priceId,
      status: "completed",
      reserved_units: expect.any(Number),
      final_units: expect.any(Number),
      usage_json: expect.any(String),
      error_code: null,
      api: "chat_completions",
      created_at: expect.stringMatching(/Z$/),
    });
    const ops = await call(stack.edgeUrl, "GET", "/ops/ai/requests", { token: op.token });
    const opsIds = ops.body.data.map((r: { id: string }) => r.id);
    expect(opsIds).toContain(idA);
    expect(opsIds).toContain(idB);
    expect(opsIds.indexOf(idB)).toBeLessThan(opsIds.indexOf(idA)); // newest first
    expect((await call(stack.edgeUrl, "GET", "/ops/ai/requests", { token: a.token })).status).toBe(403);

    const view = await eventually(
      () => call(stack.edgeUrl, "GET", `/console/requests/${idA}`, { token: a.token }),
      (r) => r.status === 200 && r.body.data.audit.some((e: { type: string }) => e.type === "managed_ai.request_settled"),
    );
    expect(view.body.data).toMatchObject({ request_id: idA, key: { id: a.keyId }, usage: { id: idA, status: "completed" } });
    const managed = view.body.data.audit.filter((e: { type: string }) => e.type.startsWith("managed_ai."));
    expect(managed.map((e: { type: string }) => e.type)).toEqual(["managed_ai.request_reserved", "managed_ai.request_settled"]);
    expect(managed[1].data).toMatchObject({
      request_id: idA,
      tenant_id: a.tenantId,
      status: "completed",
      final_units: String(view.body.data.usage.final_units),
    });
    // The charge's movement, from the ledger's journal: posted from an allotment, or captured
    // from a hold of its own (then reserved first, under the request's reserve operation).
    const charges = [`post:${idA}`, `capture:${idA}`];
    const charged = await eventually(
      () => call(stack.edgeUrl, "GET", `/console/requests/${idA}`, { token: a.token }),
      (r) => r.status === 200 && r.body.data.audit.some((e: { data: { operation_id?: string } }) => charges.includes(e.data.operation_id ?? "")),
    );
    const ledgerEvents = charged.body.data.audit.filter((e: { source: string }) => e.source === "ledger");
    const charge = ledgerEvents.find((e: { data: { operation_id: string } }) => charges.includes(e.data.operation_id));
    expect(charge).toMatchObject({ data: { tenant_id: a.tenantId, units: String(view.body.data.usage.final_units) } });
    expect(ledgerEvents.map((e: { type: string }) => e.type)).toEqual(
      charge.type === "ledger.captured" ? ["ledger.reserved", "ledger.captured"] : ["ledger.posted"],
    );
    // The audit trail keeps no copy of what the usage record and the journal keep (docs/decisions/0330).
    const copies = await stack.sql<{ n: number }>(
      "jobs",
      "SELECT count(*)::int AS n FROM audit_events WHERE data->>'request_id' = $1 OR data->>'operation_id' = ANY($2)",
      [idA, [`post:${idA}`, `capture:${idA}`, `reserve:${idA}`]],
    );
    expect(copies[0]!.n).toBe(0);
    expect(JSON.stringify(view.body)).not.toContain("Say hello");
    expect((await call(stack.edgeUrl, "GET", `/console/requests/${idA}`, { token: b.token })).status).toBe(404);
  });
});
