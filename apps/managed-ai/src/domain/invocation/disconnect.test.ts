import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { countTokens, embeddingTokens, promptTokens, replyFor, startMockProvider, truncateToTokens, type MockProvider } from "@gateway/mock-provider";
import { ProviderClient } from "../../providers/openai.js";
import { createTestContext, type TestContext } from "../../testing/context.js";
import { startTestLedger, type TestLedger } from "../../testing/ledger.js";
import { until } from "../../testing/wait.js";
import { putInstance } from "../instances/put.js";
import { putModel } from "../models/put.js";
import { publishPrice } from "../prices/publish.js";
import { putUpstream } from "../upstreams/put.js";
import { invokeEmbeddings } from "./embed.js";
import { invokeChat, type InvokeInput } from "./invoke.js";
import { invokeChatStream, type StreamMessage } from "./invoke-stream.js";

/*
 * CONTRACT.md section 6 (docs/decisions/0177): a client that disconnects after
 * the reservation stops the relay, not the metering. Real PostgreSQL, the mock
 * provider on a real socket, the real ledger (a process of its own).
 */

const KEY = "sk-unit-meter-key";
const actor = "user:u1";
const TENANT = "ten_meter";
const CREDIT = 10_000_000n;
// Fractions of a unit per token, so that rounding up shows.
const PRICE = { input: 150_000_007n, output: 600_000_011n };

let t: TestContext;
let provider: MockProvider;
let L: TestLedger;

beforeAll(async () => {
  provider = await startMockProvider({ apiKey: KEY });
  L = await startTestLedger();
  t = await createTestContext({
    provider: new ProviderClient({ headersMs: 5_000, idleMs: 5_000 }, { allowPrivate: true }),
    ledgerCalls: L.calls,
  });
  const ctx = t.ctx;
  await putUpstream({ ctx, input: { id: "mock", provider: "openai", base_url: provider.url, api_key: KEY, actor } });
  await putModel({ ctx, input: { alias: "small", upstream_id: "mock", upstream_model: "mock-small", actor } });
  await publishPrice({
    ctx,
    input: { model_alias: "small", input_units_per_mtok: PRICE.input.toString(), output_units_per_mtok: PRICE.output.toString(), actor },
  });
  await putInstance({ ctx, input: { actor, tenant_id: TENANT, alias: "chat", status: "active", mode: "managed", default_model: "small" } });
  await putInstance({
    ctx,
    input: {
      actor,
      tenant_id: TENANT,
      alias: "own",
      status: "active",
      mode: "byok",
      provider: "openai",
      base_url: provider.url,
      default_model: "mock-small",
      api_key: KEY,
    },
  });
  await L.credit(TENANT, CREDIT);
}, 120_000);
afterAll(async () => {
  await t?.close();
  await provider?.close();
  await L?.close();
});
beforeEach(() => provider.reset());

const messages = [{ role: "user", content: "Tell me a long story about holds, captures and voids, with many words in it." }];

/** The contract's cost formula, written out again: ceil((i*pi + o*po) / 10^6), no discount. */
const cost = (input: bigint, output: bigint) => (input * PRICE.input + output * PRICE.output + 999_999n) / 1_000_000n;
/** What the mock provider reports for a chat of `messages` capped at `maxTokens`. */
const chatCost = (maxTokens: number) => cost(BigInt(promptTokens(messages)), BigInt(countTokens(truncateToTokens(replyFor(messages), maxTokens).text)));

let n = 0;
function input(alias: string, body: Record<string, unknown>, signal: AbortSignal, deadline?: Date): InvokeInput {
  return {
    requestId: `req_meter${++n}${Date.now()}`,
    tenantId: TENANT,
    apiKeyId: "key_1",
    alias,
    body: Buffer.from(JSON.stringify(body)),
    idempotencyKey: null,
    signal,
    deadline,
  };
}

/**
 * The client leaves while the provider works on the call: once the provider has it
 * (so after the reservation, which the ledger holds), before the call has ended
 * (the provider's delay outlasts this check by far: both run in this process).
 */
async function leaveDuringCall(client: AbortController, pending: Promise<unknown>, requestId: string): Promise<void> {
  let ended = false;
  void pending.then(
    () => (ended = true),
    () => (ended = true),
  );
  await until("the provider has the call", () => provider.requests.length === 1);
  expect(ended, "the call had ended before its client left").toBe(false);
  client.abort();
  expect(await L.holdOf(requestId)).not.toBeNull();
}

const record = async (id: string) =>
  (
    await t.ctx.sql.query<{ status: string; error_code: string | null; final_units: string | null; reserved_units: string; hold_id: string | null }>(
      "SELECT status, error_code, final_units::text, reserved_units::text, hold_id FROM usage_records WHERE id = $1",
      [id],
    )
  )[0];

/** The tenant's balance must be exactly the credit less every charge so far (nothing else held). */
async function expectBooks(): Promise<void> {
  const [row] = await t.ctx.sql.query<{ charged: string | null; held: string | null }>(
    "SELECT sum(final_units) FILTER (WHERE status = 'completed')::text AS charged, sum(reserved_units) FILTER (WHERE status IN ('review', 'reserved'))::text AS held FROM usage_records WHERE tenant_id = $1",
    [TENANT],
  );
  const charged = BigInt(row?.charged ?? "0");
  const held = BigInt(row?.held ?? "0");
  expect(await L.balance(TENANT)).toEqual({ available: CREDIT - charged - held, reserved: held });
}

/** A stream whose client leaves after `afterData` data messages: later sends fail as grpc-kit's do on a cancelled call. */
function leavingClient(client: AbortController, afterData: number) {
  const sent: StreamMessage[] = [];
  let failedSends = 0;
  const send = async (message: StreamMessage) => {
    if (client.signal.aborted) {
      failedSends++;
      throw new Error("call cancelled");
    }
    sent.push(message);
    if (sent.filter((m) => "data" in m).length >= afterData) client.abort();
  };
  return { send, sent, failedSends: () => failedSends };
}

describe("a JSON chat whose client leaves after the reservation", () => {
  it("finishes the provider call and charges the exact cost of its usage", async () => {
    provider.set({ delayMs: 300 });
    const client = new AbortController();
    const req = input("chat", { messages, max_tokens: 50 }, client.signal);
    const pending = invokeChat({ ctx: t.ctx, input: req });
    await leaveDuringCall(client, pending, req.requestId);
    const result = await pending;

    const expected = chatCost(50);
    expect(result.finalUnits).toBe(expected);
    expect(await record(req.requestId)).toMatchObject({ status: "completed", error_code: null, final_units: expected.toString() });
    expect(await L.holdOf(req.requestId)).toMatchObject({ status: "captured", captured: expected });
    expect(provider.requests).toHaveLength(1);
    await expectBooks();
  });

  it("goes to review with its hold when the request's deadline cuts the provider call", async () => {
    provider.set({ delayMs: 10_000 });
    const client = new AbortController();
    const req = input("chat", { messages, max_tokens: 50 }, client.signal, new Date(Date.now() + 1_500));
    const pending = invokeChat({ ctx: t.ctx, input: req }).catch((err: unknown) => err);
    // Gone once the reservation is taken; the deadline cuts the call (or, on a slow machine, found it passed).
    await until("the reservation is in the ledger", async () => (await L.holdOf(req.requestId)) !== null);
    client.abort();
    expect(await pending).toMatchObject({ code: "unavailable" });
    expect(await record(req.requestId)).toMatchObject({ status: "review", error_code: "deadline_exceeded", final_units: null });
    expect(await L.holdOf(req.requestId)).toMatchObject({ status: "open" });
    await expectBooks();
  });
});

describe("embeddings whose client leaves after the reservation", () => {
  it("finish the provider call and charge the exact cost of its usage", async () => {
    provider.set({ delayMs: 300 });
    const texts = ["first text to embed", "a second, longer text to embed: é😀"];
    const client = new AbortController();
    const req = input("chat", { input: texts }, client.signal);
    const pending = invokeEmbeddings({ ctx: t.ctx, input: req });
    await leaveDuringCall(client, pending, req.requestId);
    const result = await pending;

    const expected = cost(BigInt(texts.reduce((sum, s) => sum + embeddingTokens(s), 0)), 0n);
    expect(result.finalUnits).toBe(expected);
    expect(await record(req.requestId)).toMatchObject({ status: "completed", final_units: expected.toString() });
    expect(await L.holdOf(req.requestId)).toMatchObject({ status: "captured", captured: expected });
    await expectBooks();
  });
});

describe("a stream whose client leaves", () => {
  it("stops relaying, reads the provider's stream to its end and charges the exact cost of its usage", async () => {
    provider.set({ chunkDelayMs: 15 });
    for (const afterData of [0, 1, 3]) {
      const client = new AbortController();
      const leaving = leavingClient(client, afterData);
      if (afterData === 0) client.abort(); // gone before `start`: nothing is sent at all
      const req = input("chat", { messages, max_tokens: 40, stream: true }, client.signal);
      await invokeChatStream({ ctx: t.ctx, input: req, send: leaving.send });

      const expected = chatCost(40);
      expect(await record(req.requestId), `after ${afterData}`).toMatchObject({ status: "completed", error_code: null, final_units: expected.toString() });
      expect(await L.holdOf(req.requestId)).toMatchObject({ status: "captured", captured: expected });
      // Sends stopped once the client was gone: at most the one that found out.
      expect(leaving.sent.filter((m) => "data" in m)).toHaveLength(afterData);
      expect(leaving.failedSends()).toBeLessThanOrEqual(1);
    }
    expect(provider.abandoned).toEqual([]);
    await expectBooks();
  });

  it("goes to review with its hold when the provider's stream ends without usage", async () => {
    provider.set({ chunkDelayMs: 5, omitUsage: true });
    const client = new AbortController();
    const req = input("chat", { messages, max_tokens: 40, stream: true, stream_options: { include_usage: true } }, client.signal);
    await invokeChatStream({ ctx: t.ctx, input: req, send: leavingClient(client, 1).send });
    expect(await record(req.requestId)).toMatchObject({ status: "review", error_code: "usage_unavailable", final_units: null });
    expect(await L.holdOf(req.requestId)).toMatchObject({ status: "open" });
    await expectBooks();
  });

  it("goes to review with its hold when the deadline cuts it before the usage", async () => {
    provider.set({ chunkDelayMs: 50 });
    const client = new AbortController();
    const req = input("chat", { messages, max_tokens: 60, stream: true }, client.signal, new Date(Date.now() + 250));
    await invokeChatStream({ ctx: t.ctx, input: req, send: leavingClient(client, 1).send });
    expect(await record(req.requestId)).toMatchObject({ status: "review", error_code: "deadline_exceeded", final_units: null });
    expect(await L.holdOf(req.requestId)).toMatchObject({ status: "open" });
    await expectBooks();
  });

  it("on a byok instance reads the provider's stream to its end too, and records its usage (nothing is charged)", async () => {
    provider.set({ chunkDelayMs: 30 });
    const client = new AbortController();
    const req = input("own", { messages, max_tokens: 60, stream: true }, client.signal);
    await invokeChatStream({ ctx: t.ctx, input: req, send: leavingClient(client, 1).send });
    expect(provider.abandoned).toEqual([]);
    const row = await record(req.requestId);
    expect(row).toMatchObject({ status: "completed", hold_id: null, reserved_units: "0" });
    expect(await L.holdOf(req.requestId)).toBeNull();
    await expectBooks();
  });
});
