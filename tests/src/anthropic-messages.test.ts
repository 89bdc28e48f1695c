// CONTRACT.md 6c through Anthropic's official SDK (@anthropic-ai/sdk): messages.create and
// messages.stream (text and events), tools (tool_use with its input, a tool_result turn,
// streamed tool input), count_tokens, errors in Anthropic's shape, a byok instance. Every
// call checks its money: the charge is the contract's cost of the usage the provider
// reported (which the message's usage shows), the reservation covers it, and the balance
// drops by exactly the charge. One metering path: the records are the chat route's, with
// api "messages".
import Anthropic, { type APIError } from "@anthropic-ai/sdk";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { promptTokens, type MockProvider } from "@gateway/mock-provider";
import { call, type Stack } from "@gateway/testkit";
import {
  balance,
  balanceWithin1s,
  customer,
  expectedCost,
  managedModel,
  meteredStack,
  usageRecord,
  usd,
  type Customer,
  type ManagedModel,
  type Operator,
} from "./support/managed-ai.js";
import { byokInstance, customerProvider, tenantWithKey } from "./support/byok.js";

let stack: Stack;
let provider: MockProvider;
let op: Operator;
let model: ManagedModel;
const metered = meteredStack({ env: { "managed-ai": { ALLOW_PRIVATE_TARGETS: "true" } } });
beforeAll(() => {
  ({ stack, provider, op, model } = metered);
});
beforeEach(() => provider.reset());

/** The official SDK pointed at an instance, as a customer sets it up: base URL without /v1 (the SDK adds it). */
const anthropic = (c: { key: string }, alias: string, options: { bearer?: boolean } = {}) =>
  new Anthropic({
    ...(options.bearer ? { authToken: c.key, apiKey: null } : { apiKey: c.key }),
    baseURL: `${stack.edgeUrl}/v1/apps/ai/${alias}`,
    maxRetries: 0,
    timeout: 30_000,
  });

const chatCalls = () => provider.requests.filter((r) => r.path === "/v1/chat/completions");
const sentBody = () => chatCalls().at(-1)!.body as { messages: never[]; tools?: unknown[]; [k: string]: unknown };

const weather: Anthropic.Tool = {
  name: "get_weather",
  description: "The weather now in a city.",
  input_schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"], additionalProperties: false },
};

/** What the request lookup shows of a request's usage record. */
async function lookup(c: Customer, requestId: string) {
  const res = await call<{ data: { usage: { api: string | null; status: string; final_units: number | null } | null } }>(
    stack.edgeUrl,
    "GET",
    `/console/requests/${requestId}`,
    { token: c.token },
  );
  return res.body.data.usage;
}

/**
 * The money of one settled call, from the message's usage (the provider's, translated):
 * the record is completed with the contract's cost of it and api "messages", the
 * reservation covers that cost and the prompt at the full output cap, the headers say
 * both, and the balance drops by exactly the charge.
 */
async function expectCharged(c: Customer, before: number, headers: Headers, usage: Anthropic.Usage, cap: number): Promise<bigint> {
  const charge = expectedCost(BigInt(usage.input_tokens), BigInt(usage.output_tokens), model);
  const requestId = headers.get("x-request-id")!;
  const record = await usageRecord(stack, requestId);
  expect(record).toMatchObject({ status: "completed", final_units: charge.toString(), error_code: null });
  const reserved = BigInt(record!.reserved_units);
  expect(headers.get("x-service-estimated-cost")).toBe(usd(reserved));
  expect(headers.get("x-service-price-version")).toBe(model.priceId);
  expect(reserved).toBeGreaterThanOrEqual(charge);
  expect(reserved).toBeGreaterThanOrEqual(expectedCost(BigInt(usage.input_tokens), BigInt(cap), model));
  const finalHeader = headers.get("x-service-final-cost");
  if (finalHeader !== null) expect(finalHeader).toBe(usd(charge));
  expect(await balanceWithin1s(stack, c, { available_units: before - Number(charge), reserved_units: 0 })).toEqual({
    available_units: before - Number(charge),
    reserved_units: 0,
  });
  expect(await lookup(c, requestId)).toMatchObject({ api: "messages", status: "completed", final_units: Number(charge) });
  return charge;
}

describe("messages.create", () => {
  it("answers a message with the text, end_turn and the provider's usage; the system prompt is a system message; charged exactly", async () => {
    const c = await customer(stack, op, { units: 1_000_000, alias: "claude", defaultModel: "small" });
    const before = (await balance(stack, c)).available_units;
    const { data, response } = await anthropic(c, "claude")
      .messages.create(
        {
          model: "small",
          max_tokens: 64,
          system: [{ type: "text", text: "Be brief.", cache_control: { type: "ephemeral" } }],
          messages: [{ role: "user", content: [{ type: "text", text: "Hello, gateway", cache_control: { type: "ephemeral" } }] }],
          metadata: { user_id: "user-42" },
          // In 6c's list; the SDK's types no longer name it (newer models refuse it), the API still takes it.
          ...({ temperature: 0.3 } as object),
        },
        { headers: { "anthropic-beta": "prompt-caching-2024-07-31" } },
      )
      .withResponse();

    expect(sentBody()).toEqual({
      model: "mock-small",
      messages: [
        { role: "system", content: [{ type: "text", text: "Be brief." }] },
        { role: "user", content: [{ type: "text", text: "Hello, gateway" }] },
      ],
      max_tokens: 64,
      temperature: 0.3,
    });
    expect(chatCalls().at(-1)!.headers["anthropic-beta"]).toBeUndefined();
    const requestId = response.headers.get("x-request-id")!;
    expect(data).toEqual({
      id: `msg_${requestId.replace(/^req_/, "")}`,
      type: "message",
      role: "assistant",
      model: "small",
      content: [{ type: "text", text: "Mock reply to: Hello, gateway" }],
      stop_reason: "end_turn",
      stop_sequence: null,
      usage: { input_tokens: promptTokens(sentBody().messages), output_tokens: Math.ceil(Buffer.byteLength("Mock reply to: Hello, gateway") / 4) },
    });
    await expectCharged(c, before, response.headers, data.usage, 64);
  });

  it("max_tokens cuts the answer (max_tokens); a stop sequence the provider names ends it (stop_sequence); Bearer works too", async () => {
    const c = await customer(stack, op, { units: 1_000_000, alias: "claude", defaultModel: "small" });
    let before = (await balance(stack, c)).available_units;
    const client = anthropic(c, "claude", { bearer: true });
    const cut = await client.messages.create({ model: "small", max_tokens: 3, messages: [{ role: "user", content: "Tell me a long story" }] }).withResponse();
    expect(cut.data).toMatchObject({ stop_reason: "max_tokens", stop_sequence: null, usage: { output_tokens: 3 } });
    before -= Number(await expectCharged(c, before, cut.response.headers, cut.data.usage, 3));

    const stopped = await client.messages
      .create({ model: "small", max_tokens: 50, stop_sequences: ["story", "never"], messages: [{ role: "user", content: "Tell me a long story" }] })
      .withResponse();
    expect(sentBody()).toMatchObject({ stop: ["story", "never"] });
    expect(stopped.data).toMatchObject({
      content: [{ type: "text", text: "Mock reply to: Tell me a long " }],
      stop_reason: "stop_sequence",
      stop_sequence: "story",
    });
    await expectCharged(c, before, stopped.response.headers, stopped.data.usage, 50);
  });
});

describe("messages.stream", () => {
  it("streams Anthropic's events in order as the provider's words arrive; the final message and the charge agree", async () => {
    const c = await customer(stack, op, { units: 1_000_000, alias: "claude", defaultModel: "small" });
    const before = (await balance(stack, c)).available_units;
    const stream = anthropic(c, "claude").messages.stream({
      model: "small",
      max_tokens: 80,
      messages: [{ role: "user", content: "Stream this reply please" }],
    });
    const texts: string[] = [];
    const types: string[] = [];
    stream.on("text", (t) => texts.push(t));
    stream.on("streamEvent", (e) => types.push(e.type));
    const { response } = await stream.withResponse();
    const message = await stream.finalMessage();

    expect(sentBody()).toMatchObject({ stream: true, stream_options: { include_usage: true }, max_tokens: 80 });
    expect(texts.join("")).toBe("Mock reply to: Stream this reply please");
    expect(texts.length).toBe(7); // one text_delta per word the provider sent
    expect(types).toEqual([
      "message_start",
      "content_block_start",
      ...texts.map(() => "content_block_delta"),
      "content_block_stop",
      "message_delta",
      "message_stop",
    ]);
    expect(message).toMatchObject({
      model: "small",
      content: [{ type: "text", text: "Mock reply to: Stream this reply please" }],
      stop_reason: "end_turn",
      usage: { input_tokens: promptTokens(sentBody().messages), output_tokens: Math.ceil(Buffer.byteLength("Mock reply to: Stream this reply please") / 4) },
    });
    expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/);
    expect(response.headers.get("x-service-final-cost")).toBeNull();
    await expectCharged(c, before, response.headers, message.usage, 80);
  });

  it("the raw stream: named events, no [DONE], message_delta carries the usage", async () => {
    const c = await customer(stack, op, { units: 1_000_000, alias: "claude", defaultModel: "small" });
    const res = await fetch(`${stack.edgeUrl}/v1/apps/ai/claude/v1/messages`, {
      method: "POST",
      headers: { "x-api-key": c.key, "content-type": "application/json", "anthropic-version": "2023-06-01" },
      body: JSON.stringify({ model: "small", max_tokens: 20, stream: true, messages: [{ role: "user", content: "Hi" }] }),
    });
    const text = await res.text();
    expect(text).not.toContain("[DONE]");
    const frames = text.split("\n\n").filter(Boolean);
    for (const frame of frames) {
      const [event, data] = frame.split("\n");
      expect(event).toMatch(/^event: [a-z_]+$/);
      expect(JSON.parse(data!.replace(/^data: /, "")).type).toBe(event!.slice("event: ".length));
    }
    const delta = JSON.parse(frames.at(-2)!.split("\n")[1]!.slice(6));
    expect(delta).toEqual({
      type: "message_delta",
      delta: { stop_reason: "end_turn", stop_sequence: null },
      usage: { input_tokens: promptTokens(sentBody().messages), output_tokens: Math.ceil(Buffer.byteLength("Mock reply to: Hi") / 4) },
    });
  });
});

describe("tools", () => {
  it("a tool_use with its input, then a tool_result turn: both charged at the cost of their usage", async () => {
    const c = await customer(stack, op, { units: 1_000_000, alias: "claude", defaultModel: "small" });
    const client = anthropic(c, "claude");
    const start = (await balance(stack, c)).available_units;
    const ask: Anthropic.MessageParam[] = [{ role: "user", content: "What is the weather in Paris?" }];
    const first = await client.messages
      .create({ model: "small", max_tokens: 40, messages: ask, tools: [weather], tool_choice: { type: "auto", disable_parallel_tool_use: true } })
      .withResponse();
    expect(sentBody()).toMatchObject({
      tools: [{ type: "function", function: { name: "get_weather", description: weather.description, parameters: weather.input_schema } }],
      tool_choice: "auto",
      parallel_tool_calls: false,
    });
    expect(first.data.stop_reason).toBe("tool_use");
    const use = first.data.content.find((b): b is Anthropic.ToolUseBlock => b.type === "tool_use")!;
    expect(use).toMatchObject({ type: "tool_use", name: "get_weather", input: { city: "mock" } });
    expect(first.data.usage.input_tokens).toBe(promptTokens(sentBody().messages, { tools: sentBody().tools }));
    const charge1 = await expectCharged(c, start, first.response.headers, first.data.usage, 40);

    const turn: Anthropic.MessageParam[] = [
      ...ask,
      { role: "assistant", content: first.data.content },
      { role: "user", content: [{ type: "tool_result", tool_use_id: use.id, content: [{ type: "text", text: "21 °C, clear" }] }] },
    ];
    const second = await client.messages.create({ model: "small", max_tokens: 40, messages: turn, tools: [weather] }).withResponse();
    expect(sentBody().messages).toEqual([
      { role: "user", content: "What is the weather in Paris?" },
      { role: "assistant", content: null, tool_calls: [{ id: use.id, type: "function", function: { name: "get_weather", arguments: '{"city":"mock"}' } }] },
      { role: "tool", tool_call_id: use.id, content: [{ type: "text", text: "21 °C, clear" }] },
    ]);
    expect(second.data).toMatchObject({ stop_reason: "end_turn", content: [{ type: "text", text: "Mock reply to tool results: 21 °C, clear" }] });
    const charge2 = await expectCharged(c, start - Number(charge1), second.response.headers, second.data.usage, 40);
    expect((await balance(stack, c)).available_units).toBe(start - Number(charge1 + charge2));
  });

  it("streamed: the tool input arrives as input_json_delta pieces as the provider sends them, and rebuilds the input", async () => {
    const c = await customer(stack, op, { units: 1_000_000, alias: "claude", defaultModel: "small" });
    const before = (await balance(stack, c)).available_units;
    const dictated = { city: "Reykjavík, Ísland 🌋", days: [1, 2, 3] };
    provider.set({ toolCalls: [{ name: "get_weather", arguments: JSON.stringify(dictated) }] });
    const stream = anthropic(c, "claude").messages.stream({
      model: "small",
      max_tokens: 90,
      messages: [{ role: "user", content: "Weather?" }],
      tools: [weather],
      tool_choice: { type: "tool", name: "get_weather" },
    });
    const pieces: string[] = [];
    stream.on("inputJson", (partial) => pieces.push(partial));
    const { response } = await stream.withResponse();
    const message = await stream.finalMessage();
    expect(sentBody()).toMatchObject({ tool_choice: { type: "function", function: { name: "get_weather" } } });
    expect(pieces.join("")).toBe(JSON.stringify(dictated));
    expect(pieces.length).toBeGreaterThan(3); // relayed piece by piece, as the provider sent them
    expect(message.stop_reason).toBe("tool_use");
    expect(message.content).toEqual([{ type: "tool_use", id: expect.stringMatching(/^call_/), name: "get_weather", input: dictated }]);
    await expectCharged(c, before, response.headers, message.usage, 90);
  });
});

describe("count_tokens", () => {
  it("is the gateway's upper bound, the one a call reserves for its input, and is not metered", async () => {
    const c = await customer(stack, op, { units: 1_000_000, alias: "claude", defaultModel: "small" });
    const client = anthropic(c, "claude");
    const body = {
      model: "small",
      system: "Use the tools.",
      messages: [{ role: "user" as const, content: "What is the weather in Paris?" }],
      tools: [weather],
    };
    const counted = await client.messages.countTokens(body);
    expect(chatCalls()).toHaveLength(0);
    expect(await balance(stack, c)).toEqual({ available_units: 1_000_000, reserved_units: 0 });

    const { data, response } = await client.messages.create({ ...body, max_tokens: 30 }).withResponse();
    const [row] = await stack.sql<{ input_tokens_bound: number }>("managed-ai", "SELECT input_tokens_bound FROM usage_records WHERE id = $1", [
      response.headers.get("x-request-id"),
    ]);
    expect(counted.input_tokens).toBe(row!.input_tokens_bound);
    expect(counted.input_tokens).toBeGreaterThanOrEqual(data.usage.input_tokens);
    expect(response.headers.get("x-service-estimated-cost")).toBe(usd(expectedCost(BigInt(counted.input_tokens), 30n, model)));
  });

  it("counts each image at the model's max_tokens_per_image, and refuses images on a model without it", async () => {
    const vision = await managedModel(stack, op, { alias: "vision", upstreamId: "mock", inputPerMtok: 250_000_003, outputPerMtok: 1_000_000_007 });
    const c = await customer(stack, op, { units: 1_000_000, alias: "eyes", defaultModel: "vision" });
    const client = anthropic(c, "eyes");
    const content: Anthropic.ContentBlockParam[] = [
      { type: "text", text: "What is this?" },
      { type: "image", source: { type: "url", url: "https://images.example.com/cat.jpg" } },
    ];
    const refused = await client.messages.countTokens({ model: "vision", messages: [{ role: "user", content }] }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(Anthropic.BadRequestError);
    expect((refused as APIError).type).toBe("invalid_request_error");
    expect((refused as APIError).message).toMatch(/max_tokens_per_image/);
    await call(stack.edgeUrl, "PUT", "/ops/ai/models/vision", {
      token: op.token,
      body: { upstream_id: "mock", upstream_model: "mock-small", max_tokens_per_image: 1_000 },
    });
    const one = await client.messages.countTokens({ model: "vision", messages: [{ role: "user", content }] });
    const two = await client.messages.countTokens({ model: "vision", messages: [{ role: "user", content: [...content, content[1]!] }] });
    expect(two.input_tokens - one.input_tokens).toBe(1_000 + 1); // the image and its part
    const { data, response } = await client.messages.create({ model: "vision", max_tokens: 20, messages: [{ role: "user", content }] }).withResponse();
    expect(sentBody().messages).toEqual([
      {
        role: "user",
        content: [
          { type: "text", text: "What is this?" },
          { type: "image_url", image_url: { url: "https://images.example.com/cat.jpg" } },
        ],
      },
    ]);
    expect(response.headers.get("x-service-estimated-cost")).toBe(usd(expectedCost(BigInt(one.input_tokens), 20n, vision)));
    const charge = expectedCost(BigInt(data.usage.input_tokens), BigInt(data.usage.output_tokens), vision);
    expect(await usageRecord(stack, response.headers.get("x-request-id")!)).toMatchObject({ status: "completed", final_units: charge.toString() });
  });
});

describe("errors in Anthropic's shape", () => {
  /** The raw answer, for the body as written. */
  const post = (key: string, alias: string, body: unknown, path = "messages") =>
    fetch(`${stack.edgeUrl}/v1/apps/ai/${alias}/v1/${path}`, {
      method: "POST",
      headers: { "x-api-key": key, "content-type": "application/json", "anthropic-version": "2023-06-01" },
      body: typeof body === "string" ? body : JSON.stringify(body),
    });
  const ask = { model: "small", max_tokens: 50, messages: [{ role: "user", content: "How much?" }] };

  async function expectError(res: Response, status: number, type: string, extra: Record<string, unknown> = {}) {
    expect(res.status).toBe(status);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ type: "error", error: { type, message: expect.any(String) }, request_id: res.headers.get("x-request-id"), ...extra });
    return body;
  }

  it("400 names a field outside 6c (Claude Code's output_config), invalid JSON and a missing max_tokens; 413 request_too_large; nothing called", async () => {
    const c = await customer(stack, op, { units: 1_000_000, alias: "claude", defaultModel: "small" });
    const sdkError = await anthropic(c, "claude")
      .messages.create({ ...ask, output_config: { effort: "high" } } as never)
      .catch((e: unknown) => e);
    expect(sdkError).toBeInstanceOf(Anthropic.BadRequestError);
    expect(sdkError).toMatchObject({ status: 400, type: "invalid_request_error" });
    await expectError(await post(c.key, "claude", { ...ask, context_management: {} }), 400, "invalid_request_error", { param: "context_management" });
    await expectError(await post(c.key, "claude", "{not json"), 400, "invalid_request_error");
    await expectError(await post(c.key, "claude", { model: "small", messages: ask.messages }), 400, "invalid_request_error", { param: "max_tokens" });
    await expectError(await post(c.key, "claude", { ...ask, max_tokens: 5000 }), 400, "invalid_request_error", { param: "max_tokens" });
    await expectError(await post(c.key, "claude", { ...ask, messages: [{ role: "user", content: "x".repeat(1_100_000) }] }), 413, "request_too_large");
    expect(chatCalls()).toHaveLength(0);
  });

  it("401 authentication_error, 403 permission_error, 404 not_found_error, 429 rate_limit_error with Retry-After", async () => {
    const c = await customer(stack, op, { units: 1_000_000, alias: "claude", defaultModel: "small" });
    const unauthenticated = await anthropic({ key: "gw_wrong" }, "claude")
      .messages.create(ask as never)
      .catch((e: unknown) => e);
    expect(unauthenticated).toBeInstanceOf(Anthropic.AuthenticationError);
    expect(unauthenticated).toMatchObject({ type: "authentication_error" });
    await expectError(await post("gw_wrong", "claude", ask), 401, "authentication_error");
    const noScope = await call<{ data: { key: string } }>(stack.edgeUrl, "POST", "/console/keys", {
      token: c.token,
      body: { name: "push only", scopes: ["push:send"] },
    });
    await expectError(await post(noScope.body.data.key, "claude", ask), 403, "permission_error");
    const once = await call<{ data: { key: string } }>(stack.edgeUrl, "POST", "/console/keys", {
      token: c.token,
      body: { name: "one a minute", scopes: ["ai:invoke"], rate_limit_per_minute: 1 },
    });
    await expectError(await post(once.body.data.key, "nowhere", ask, "messages/count_tokens"), 404, "not_found_error");
    const limited = await post(once.body.data.key, "claude", ask);
    expect(limited.headers.get("retry-after")).toMatch(/^\d+$/);
    await expectError(limited, 429, "rate_limit_error");
  });

  it("402 billing_error and 409 invalid_request_error with pricing or budget: no provider call, nothing charged", async () => {
    const poor = await customer(stack, op, { units: 10, alias: "claude", defaultModel: "small" });
    const billing = await anthropic(poor, "claude")
      .messages.create(ask as never)
      .catch((e: unknown) => e);
    expect(billing).toMatchObject({ status: 402, type: "billing_error" });
    await expectError(await post(poor.key, "claude", ask), 402, "billing_error", { pricing: { cost: expect.any(Number) } });

    const frugal = await customer(stack, op, { units: 1_000_000, alias: "frugal", defaultModel: "small", config: { max_cost_per_request: 0.0001 } });
    await expectError(await post(frugal.key, "frugal", ask), 409, "invalid_request_error", { pricing: { cost: expect.any(Number) } });
    const budgeted = await customer(stack, op, {
      units: 1_000_000,
      alias: "claude",
      defaultModel: "small",
      keyPolicy: { budget_units: 1, budget_period: "day" },
    });
    await expectError(await post(budgeted.key, "claude", ask), 409, "invalid_request_error", { budget: { scope: "key", limit_units: 1 } });
    expect(chatCalls()).toHaveLength(0);
    for (const c of [poor, frugal, budgeted]) expect((await balance(stack, c)).reserved_units).toBe(0);
    expect((await balance(stack, poor)).available_units).toBe(10);
  });

  it("502 and 503 overloaded_error: the provider failed or is busy, the reservation is released; mid-stream an error event ends the stream", async () => {
    const c = await customer(stack, op, { units: 1_000_000, alias: "claude", defaultModel: "small" });
    provider.set({ failStatus: 500 });
    const res = await post(c.key, "claude", ask);
    await expectError(res, 502, "overloaded_error");
    expect(await usageRecord(stack, res.headers.get("x-request-id")!)).toMatchObject({ status: "failed", final_units: "0" });
    provider.set({ failStatus: 429 });
    await expectError(await post(c.key, "claude", ask), 503, "overloaded_error");
    expect(await balance(stack, c)).toEqual({ available_units: 1_000_000, reserved_units: 0 });

    provider.set({ failStatus: undefined, drop: "mid-stream" });
    const stream = anthropic(c, "claude").messages.stream({ ...ask, messages: [{ role: "user", content: "Stream and break" }] } as never);
    const broken = await stream.finalMessage().catch((e: unknown) => e);
    expect(broken).toBeInstanceOf(Anthropic.APIError);
    expect(broken).toMatchObject({ type: "overloaded_error" });
  });
});

describe("bring your own key", () => {
  it("the same route on a byok instance: translated to the customer's provider and back, recorded, never charged", async () => {
    const own = await customerProvider();
    try {
      const t = await tenantWithKey(stack, op);
      expect((await byokInstance(stack, t, "mine", own, { pricing: { input_units_per_mtok: 1_000_000, output_units_per_mtok: 2_000_000 } })).status).toBe(201);
      const { data, response } = await anthropic(t, "mine")
        .messages.create({ model: "mock-large", max_tokens: 30, system: "Be kind.", messages: [{ role: "user", content: "Hello, my provider" }] })
        .withResponse();
      expect(own.requests.at(-1)!.body).toEqual({
        model: "mock-large",
        messages: [
          { role: "system", content: "Be kind." },
          { role: "user", content: "Hello, my provider" },
        ],
        max_tokens: 30,
      });
      expect(data).toMatchObject({ model: "mock-large", content: [{ type: "text", text: "Mock reply to: Hello, my provider" }], stop_reason: "end_turn" });
      const cost = expectedCost(BigInt(data.usage.input_tokens), BigInt(data.usage.output_tokens), { inputPerMtok: 1_000_000, outputPerMtok: 2_000_000 });
      expect(response.headers.get("x-service-final-cost")).toBe(usd(cost));
      const [row] = await stack.sql<{ mode: string; api: string; status: string }>("managed-ai", "SELECT mode, api, status FROM usage_records WHERE id = $1", [
        response.headers.get("x-request-id"),
      ]);
      expect(row).toEqual({ mode: "byok", api: "messages", status: "completed" });
      expect(await balance(stack, t)).toEqual({ available_units: 1_000_000, reserved_units: 0 });
    } finally {
      await own.close();
    }
  });
});

describe("the request lookup says which API", () => {
  it("chat_completions for the OpenAI route, messages for this one", async () => {
    const c = await customer(stack, op, { units: 1_000_000, alias: "claude", defaultModel: "small" });
    const chat = await call(stack.edgeUrl, "POST", "/v1/apps/ai/claude/v1/chat/completions", {
      body: { model: "small", max_tokens: 5, messages: [{ role: "user", content: "hi" }] },
      headers: { "X-API-Key": c.key },
    });
    expect(await lookup(c, chat.headers.get("x-request-id")!)).toMatchObject({ api: "chat_completions", status: "completed" });
    const { response } = await anthropic(c, "claude")
      .messages.create({ model: "small", max_tokens: 5, messages: [{ role: "user", content: "hi" }] })
      .withResponse();
    expect(await lookup(c, response.headers.get("x-request-id")!)).toMatchObject({ api: "messages", status: "completed" });
  });
});
