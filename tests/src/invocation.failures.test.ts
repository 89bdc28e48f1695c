import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { countTokens, promptTokens, replyFor, truncateToTokens, type MockProvider } from "@gateway/mock-provider";
import { createClient } from "@gateway/grpc-kit";
import { ledgerV1 } from "@gateway/protos";
import { call, newTenant, signIn, startStack, type Stack } from "@gateway/testkit";
import {
  balance,
  balanceWithin1s,
  customer,
  expectedCost,
  inputBound,
  managedModel,
  mockProvider,
  operator,
  sdk,
  upstream,
  usageRecord,
  type Customer,
  type ManagedModel,
  type Operator,
} from "./support/managed-ai.js";
import { eventually } from "./support/operators.js";

// Long enough that a restart of managed-ai (about 1–3 s) ends before the hold expires.
const HOLD_TTL_SECONDS = 6;

let stack: Stack;
let provider: MockProvider;
let op: Operator;
let model: ManagedModel;

beforeAll(async () => {
  provider = await mockProvider();
  stack = await startStack({ env: { "managed-ai": { HOLD_TTL_SECONDS: String(HOLD_TTL_SECONDS) } } });
  op = await operator(stack);
  await upstream(stack, op, provider, "mock");
  model = await managedModel(stack, op, { alias: "small", upstreamId: "mock", inputPerMtok: 3_000_000, outputPerMtok: 9_000_000 });
});
afterAll(async () => {
  await stack?.shutdown();
  await provider?.close();
});
beforeEach(() => provider.reset());

const messages = [{ role: "user" as const, content: "Tell me a long story about holds and captures and voids" }];

function release(id: string, reason = "operator decision", token = op.token) {
  return call(stack.edgeUrl, "POST", `/ops/ai/requests/${id}/release`, { token, body: { reason } });
}

function capture(id: string, units: number, reason = "operator decision", token = op.token) {
  return call(stack.edgeUrl, "POST", `/ops/ai/requests/${id}/capture`, { token, body: { units, reason } });
}

async function streamText(c: Customer, body: Record<string, unknown>) {
  const res = await fetch(`${stack.edgeUrl}/v1/apps/ai/chat/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": c.key },
    body: JSON.stringify({ messages, stream: true, ...body }),
  });
  return { res, text: await res.text() };
}

describe("a stream that ends without usage", () => {
  it("leaves the record in review with the hold in place, until an operator releases it", async () => {
    const c = await customer(stack, op, { units: 100_000, alias: "chat", defaultModel: "small" });
    provider.set({ omitUsage: true });
    const { res, text } = await streamText(c, { max_tokens: 40, stream_options: { include_usage: true } });
    expect(text.trimEnd().endsWith("data: [DONE]")).toBe(true);
    const id = res.headers.get("x-request-id")!;
    const reservation = expectedCost(inputBound(messages), 40n, model);
    expect(await usageRecord(stack, id)).toMatchObject({
      status: "review",
      error_code: "usage_unavailable",
      final_units: null,
      reserved_units: reservation.toString(),
    });
    expect(await balance(stack, c)).toEqual({ available_units: 100_000 - Number(reservation), reserved_units: Number(reservation) });

    const finance = await newTenant(stack.edgeUrl, "finance");
    await call(stack.edgeUrl, "PUT", `/ops/users/${finance.userId}/platform-role`, { token: op.token, body: { role: "finance" } });
    expect((await release(id, "x", await signIn(stack.edgeUrl, finance.email, finance.password))).status).toBe(403);
    expect((await call(stack.edgeUrl, "POST", `/ops/ai/requests/${id}/release`, { token: op.token, body: {} })).status).toBe(400);
    expect((await release(id, "x".repeat(241))).status).toBe(400);

    const released = await release(id, "no usage from the provider; refunded");
    expect(released.status).toBe(200);
    expect(released.body).toEqual({ data: { id, status: "failed", refunded: Number(reservation) } });
    expect(await balance(stack, c)).toEqual({ available_units: 100_000, reserved_units: 0 });
    expect(await usageRecord(stack, id)).toMatchObject({ status: "failed", error_code: "usage_unavailable" });
    expect((await release(id)).status).toBe(409);
    const audit = await eventually(
      () =>
        stack.sql<{ data: Record<string, unknown> }>(
          "jobs",
          "SELECT data FROM audit_events WHERE type = 'managed_ai.request_released' AND data->>'request_id' = $1",
          [id],
        ),
      (r) => r.length === 1,
    );
    expect(audit[0]!.data).toMatchObject({
      reason: "no usage from the provider; refunded",
      refunded_units: reservation.toString(),
      actor: expect.stringMatching(/^user:/),
    });
  });

  it("refuses to release completed requests, unexpired reservations and unknown ids", async () => {
    const c = await customer(stack, op, { units: 100_000, alias: "chat", defaultModel: "small" });
    const done = await sdk(stack, c, "chat").chat.completions.create({ model: "small", messages, max_tokens: 10 }).withResponse();
    expect((await release(done.response.headers.get("x-request-id")!)).status).toBe(409);
    expect((await release("req_unknown")).status).toBe(404);
  });
});

describe("streams that break", () => {
  it("end with an error event and no [DONE] when the provider drops the connection", async () => {
    const c = await customer(stack, op, { units: 100_000, alias: "chat", defaultModel: "small" });
    provider.set({ drop: "mid-stream" });
    const { res, text } = await streamText(c, { max_tokens: 40 });
    expect(res.status).toBe(200);
    expect(text).not.toContain("[DONE]");
    expect(text).toContain('"error"');
    expect(await usageRecord(stack, res.headers.get("x-request-id")!)).toMatchObject({ status: "review", error_code: "stream_interrupted" });
  });

  it("keep reading the provider's stream when the client leaves, and charge its usage (the relay stops, not the meter)", async () => {
    const c = await customer(stack, op, { units: 100_000, alias: "chat", defaultModel: "small" });
    provider.set({ chunkDelayMs: 50 });
    const controller = new AbortController();
    const res = await fetch(`${stack.edgeUrl}/v1/apps/ai/chat/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": c.key },
      body: JSON.stringify({ messages, stream: true, max_tokens: 60 }),
      signal: controller.signal,
    });
    const reader = res.body!.getReader();
    await reader.read();
    controller.abort();
    const id = res.headers.get("x-request-id")!;
    const record = await eventually(
      () => usageRecord(stack, id),
      (r) => r?.status !== "reserved",
      15_000,
    );
    // The mock's usage for this request, priced with the contract's formula.
    const output = BigInt(countTokens(truncateToTokens(replyFor(messages), 60).text));
    const charge = expectedCost(BigInt(promptTokens(messages)), output, model);
    expect(record).toMatchObject({ status: "completed", error_code: null, final_units: charge.toString() });
    expect(provider.abandoned).toEqual([]);
    expect(await balance(stack, c)).toEqual({ available_units: 100_000 - Number(charge), reserved_units: 0 });
    expect((await release(id)).status).toBe(409);
    expect((await capture(id, 1)).status).toBe(409);
  });

  it("still go to review, with the hold, when the client leaves and the provider's stream ends without usage", async () => {
    const c = await customer(stack, op, { units: 100_000, alias: "chat", defaultModel: "small" });
    provider.set({ chunkDelayMs: 20, omitUsage: true });
    const controller = new AbortController();
    const res = await fetch(`${stack.edgeUrl}/v1/apps/ai/chat/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": c.key },
      body: JSON.stringify({ messages, stream: true, max_tokens: 60 }),
      signal: controller.signal,
    });
    await res.body!.getReader().read();
    controller.abort();
    const id = res.headers.get("x-request-id")!;
    const record = await eventually(
      () => usageRecord(stack, id),
      (r) => r?.status !== "reserved",
      15_000,
    );
    expect(record).toMatchObject({ status: "review", error_code: "usage_unavailable", final_units: null });
    const reservation = expectedCost(inputBound(messages), 60n, model);
    expect(await balance(stack, c)).toEqual({ available_units: 100_000 - Number(reservation), reserved_units: Number(reservation) });
  });
});

describe("operator capture of a review request", () => {
  it("charges the units it names, refunds the rest and completes the request; audited; refused when it should be", async () => {
    const c = await customer(stack, op, { units: 100_000, alias: "chat", defaultModel: "small" });
    provider.set({ omitUsage: true });
    const { res } = await streamText(c, { max_tokens: 40, stream_options: { include_usage: true } });
    const id = res.headers.get("x-request-id")!;
    const reservation = expectedCost(inputBound(messages), 40n, model);
    expect(await usageRecord(stack, id)).toMatchObject({ status: "review", error_code: "usage_unavailable" });

    // Who and what: platform_admin only; a body of {units, reason}; units at most the reservation.
    const finance = await newTenant(stack.edgeUrl, "finance");
    await call(stack.edgeUrl, "PUT", `/ops/users/${finance.userId}/platform-role`, { token: op.token, body: { role: "finance" } });
    expect((await capture(id, 1, "x", await signIn(stack.edgeUrl, finance.email, finance.password))).status).toBe(403);
    for (const body of [
      {},
      { units: 1 },
      { reason: "x" },
      { units: -1, reason: "x" },
      { units: 1.5, reason: "x" },
      { units: "1", reason: "x" },
      { units: 1, reason: "" },
      { units: 1, reason: "x".repeat(241) },
      { units: 1, reason: "x", extra: 1 },
    ]) {
      const refused = await call(stack.edgeUrl, "POST", `/ops/ai/requests/${id}/capture`, { token: op.token, body });
      expect(refused.status, JSON.stringify(body)).toBe(400);
      expect(refused.body).toMatchObject({ error: "invalid_request" });
    }
    const over = await capture(id, Number(reservation) + 1);
    expect(over.status).toBe(422);
    expect(over.body).toMatchObject({ error: "validation_failed" });
    expect((await capture("req_unknown", 1)).status).toBe(404);
    expect(await balance(stack, c)).toEqual({ available_units: 100_000 - Number(reservation), reserved_units: Number(reservation) });

    const charge = reservation / 2n;
    const captured = await capture(id, Number(charge), "the provider's invoice shows the work was done");
    expect(captured.status, JSON.stringify(captured.body)).toBe(200);
    expect(captured.body).toEqual({ data: { id, status: "completed", final_units: Number(charge), refunded: Number(reservation - charge) } });
    expect(await usageRecord(stack, id)).toMatchObject({ status: "completed", final_units: charge.toString() });
    expect(await balance(stack, c)).toEqual({ available_units: 100_000 - Number(charge), reserved_units: 0 });
    const [entry] = await stack.sql<{ units: string; reason: string }>("ledger", "SELECT units::text, reason FROM transfers WHERE operation_id = $1", [
      `capture:${id}`,
    ]);
    expect(entry).toEqual({ units: charge.toString(), reason: "the provider's invoice shows the work was done" });

    // Once decided, neither verb applies again; the decision is in the audit trail.
    expect((await capture(id, Number(charge))).status).toBe(409);
    expect((await release(id)).status).toBe(409);
    expect(await balance(stack, c)).toEqual({ available_units: 100_000 - Number(charge), reserved_units: 0 });
    const audit = await eventually(
      () =>
        stack.sql<{ data: Record<string, unknown> }>(
          "jobs",
          "SELECT data FROM audit_events WHERE type = 'managed_ai.request_captured' AND data->>'request_id' = $1",
          [id],
        ),
      (r) => r.length === 1,
    );
    expect(audit[0]!.data).toMatchObject({
      reason: "the provider's invoice shows the work was done",
      final_units: charge.toString(),
      refunded_units: (reservation - charge).toString(),
      actor: expect.stringMatching(/^user:/),
    });
  });
});

describe("a crash between reserve and settle", () => {
  it("loses no unit: the record stays reserved with its hold, which can be released once it expires", async () => {
    const c = await customer(stack, op, { units: 100_000, alias: "chat", defaultModel: "small" });
    provider.set({ delayMs: 5_000 });
    const pending = call(stack.edgeUrl, "POST", "/v1/apps/ai/chat/v1/chat/completions", {
      body: { messages, max_tokens: 30 },
      headers: { "X-API-Key": c.key },
    });
    const reservation = expectedCost(inputBound(messages), 30n, model);
    await eventually(
      () => balance(stack, c),
      (b) => b.reserved_units === Number(reservation),
    );
    await stack.stop("managed-ai", "SIGKILL");
    const answer = await pending;
    expect(answer.status).toBe(503);
    await stack.start("managed-ai");
    const id = answer.headers.get("x-request-id")!;
    expect(await usageRecord(stack, id)).toMatchObject({ status: "reserved", hold_id: null });
    expect(await balance(stack, c)).toEqual({ available_units: 100_000 - Number(reservation), reserved_units: Number(reservation) });

    expect((await release(id)).status).toBe(409); // not expired yet
    await new Promise((r) => setTimeout(r, HOLD_TTL_SECONDS * 1_000 + 200));
    const released = await release(id, "managed-ai crashed mid-request");
    expect(released.body).toEqual({ data: { id, status: "failed", refunded: Number(reservation) } });
    expect(await balance(stack, c)).toEqual({ available_units: 100_000, reserved_units: 0 });
    expect((await release(id)).status).toBe(409);
  });
});

describe("a burst of 200 concurrent mixed calls", () => {
  it("keeps the ledger's invariant and charges exactly the recorded final units", async () => {
    const tenants = await Promise.all([0, 1, 2, 3].map(() => customer(stack, op, { units: 200_000, alias: "chat", defaultModel: "small" })));
    const poor = await customer(stack, op, { units: 3_000, alias: "chat", defaultModel: "small" });
    const all = [...tenants, poor];
    const before = new Map(await Promise.all(all.map(async (c) => [c.tenantId, await balance(stack, c)] as const)));
    const calls = Array.from({ length: 200 }, (_, i) => {
      const c = all[i % all.length]!;
      const body: Record<string, unknown> = { messages: [{ role: "user", content: `burst ${i} ${"x".repeat(i % 37)}` }], max_tokens: 10 + (i % 50) };
      if (i % 7 === 0) body.max_cost = 0.0001; // refused: 409
      if (i % 3 === 0) body.stream = true;
      return fetch(`${stack.edgeUrl}/v1/apps/ai/chat/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": c.key },
        body: JSON.stringify(body),
      }).then(async (res) => ({ status: res.status, text: await res.text() }));
    });
    const results = await Promise.all(calls);
    const statuses = results.map((r) => r.status);
    expect(
      statuses.every((s) => [200, 402, 409].includes(s)),
      JSON.stringify(statuses),
    ).toBe(true);
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThan(100);
    expect(statuses.filter((s) => s === 402).length).toBeGreaterThan(0);

    const ledger = createClient(ledgerV1, stack.address("ledger"), { deadlineMs: 5_000, serviceToken: stack.serviceToken, tls: stack.tls });
    try {
      const charges = new Map<string, bigint>();
      for (const c of all) {
        const rows = await stack.sql<{ status: string; n: number; final: string | null }>(
          "managed-ai",
          "SELECT status, count(*)::int AS n, sum(final_units)::text AS final FROM usage_records WHERE tenant_id = $1 GROUP BY status",
          [c.tenantId],
        );
        expect(
          rows.every((r) => r.status === "completed"),
          JSON.stringify(rows),
        ).toBe(true);
        const charged = BigInt(rows[0]?.final ?? "0");
        charges.set(c.tenantId, charged);
        // Both views reflect a settled call within 1 s (CONTRACT.md section 4: charges from an
        // allotment reach the ledger in batches, docs/decisions/0028).
        const after = await balanceWithin1s(stack, c, {
          available_units: before.get(c.tenantId)!.available_units - Number(charged),
          reserved_units: 0,
        });
        expect(after.reserved_units).toBe(0);
        expect(BigInt(before.get(c.tenantId)!.available_units - after.available_units)).toBe(charged);
      }
      // Once the views agree, the journal: every charge posted or captured.
      const check = await ledger.CheckInvariant({ all_tenants: true });
      expect(check.ok).toBe(true);
      expect(check.journal_sum).toBe("0");
      for (const c of all) {
        const charged = charges.get(c.tenantId)!;
        const tenant = check.tenants.find((t) => t.tenant_id === c.tenantId)!;
        // The ledger holds nothing but what is left of the tenant's open allotment (docs/decisions/0028),
        // which the balance view above shows as available.
        const [left] = await stack.sql<{ units: string }>(
          "ledger",
          "SELECT coalesce(sum(units - posted - released), 0)::text AS units FROM allotments WHERE tenant_id = $1 AND closed_at IS NULL",
          [c.tenantId],
        );
        expect(tenant).toMatchObject({ ok: true, captured: charged.toString(), held: left!.units });
      }
      const completed = await stack.sql<{ n: number }>(
        "managed-ai",
        "SELECT count(*)::int AS n FROM usage_records WHERE tenant_id = ANY($1) AND status = 'completed'",
        [all.map((c) => c.tenantId)],
      );
      expect(completed[0]!.n).toBe(statuses.filter((s) => s === 200).length);
    } finally {
      ledger.close();
    }
  });
});
