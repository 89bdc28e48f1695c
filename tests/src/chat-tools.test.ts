// CONTRACT.md 6b through the official `openai` SDK on a managed instance: tools (JSON and
// streamed), a two-turn tool loop, image parts, several choices, json_schema response
// formats and refused fields. Every call checks its money: the charge is the contract's
// cost of the usage the provider reported, the reservation covers it, and the balance
// drops by exactly the charge.
import type OpenAI from "openai";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { MockProvider } from "@gateway/mock-provider";
import { call, type Stack } from "@gateway/testkit";
import {
  balance,
  balanceWithin1s,
  customer,
  expectedCost,
  inputBound,
  managedModel,
  meteredStack,
  sdk,
  usageRecord,
  usd,
  type Customer,
  type ManagedModel,
  type Operator,
} from "./support/managed-ai.js";

let stack: Stack;
let provider: MockProvider;
let op: Operator;
let model: ManagedModel;
const metered = meteredStack();
beforeAll(() => {
  ({ stack, provider, op, model } = metered);
});
beforeEach(() => provider.reset());

const weather: OpenAI.ChatCompletionTool = {
  type: "function",
  function: {
    name: "get_weather",
    description: "The weather now in a city.",
    parameters: {
      type: "object",
      properties: { city: { type: "string", description: "City name" }, unit: { type: "string", enum: ["celsius", "fahrenheit"] } },
      required: ["city", "unit"],
      additionalProperties: false,
    },
    strict: true,
  },
};
const clock: OpenAI.ChatCompletionTool = { type: "function", function: { name: "get_time", parameters: { type: "object", properties: {} } } };
const ask: OpenAI.ChatCompletionMessageParam[] = [
  { role: "system", content: "Use the tools." },
  { role: "user", content: "What is the weather in Paris?" },
];
const chatCalls = () => provider.requests.filter((r) => r.path === "/v1/chat/completions");

type Usage = { prompt_tokens: number; completion_tokens: number };

/** The same request without the SDK, for the contract's error body. */
const invoke = (c: Customer, alias: string, body: Record<string, unknown>) =>
  call(stack.edgeUrl, "POST", `/v1/apps/ai/${alias}/v1/chat/completions`, { body, headers: { "X-API-Key": c.key } });

/**
 * The money of one settled call: the usage record is completed with the contract's cost of
 * the reported usage, the reservation (header and record) is at least the cost of the
 * reported prompt at the full output cap of every choice, and the balance drops by the charge.
 */
async function expectCharged(
  c: Customer,
  before: number,
  response: Response,
  usage: Usage,
  output: { cap: number; choices?: number },
  m: Pick<ManagedModel, "inputPerMtok" | "outputPerMtok"> = model,
): Promise<bigint> {
  const charge = expectedCost(BigInt(usage.prompt_tokens), BigInt(usage.completion_tokens), m);
  const record = await usageRecord(stack, response.headers.get("x-request-id")!);
  expect(record).toMatchObject({ status: "completed", final_units: charge.toString(), error_code: null });
  const reserved = BigInt(record!.reserved_units);
  expect(response.headers.get("x-service-estimated-cost")).toBe(usd(reserved));
  expect(reserved).toBeGreaterThanOrEqual(charge);
  expect(reserved).toBeGreaterThanOrEqual(expectedCost(BigInt(usage.prompt_tokens), BigInt(output.cap * (output.choices ?? 1)), m));
  const finalHeader = response.headers.get("x-service-final-cost");
  if (finalHeader !== null) expect(finalHeader).toBe(usd(charge));
  expect(await balanceWithin1s(stack, c, { available_units: before - Number(charge), reserved_units: 0 })).toEqual({
    available_units: before - Number(charge),
    reserved_units: 0,
  });
  return charge;
}

describe("tools", () => {
  it("JSON: the provider gets tools and tool_choice unchanged and the tool call comes back unchanged", async () => {
    const c = await customer(stack, op, { units: 1_000_000, alias: "chat", defaultModel: "small" });
    const before = (await balance(stack, c)).available_units;
    const { data, response } = await sdk(stack, c, "chat")
      .chat.completions.create({ model: "small", messages: ask, tools: [weather, clock], tool_choice: "auto", parallel_tool_calls: false, max_tokens: 60 })
      .withResponse();

    const sent = chatCalls().at(-1)!.body as Record<string, unknown>;
    expect(sent).toEqual({
      model: "mock-small",
      messages: ask,
      tools: [weather, clock],
      tool_choice: "auto",
      parallel_tool_calls: false,
      max_tokens: 60,
    });
    const choice = data.choices[0]!;
    expect(choice.finish_reason).toBe("tool_calls");
    expect(choice.message.content).toBeNull();
    const toolCall = choice.message.tool_calls![0] as OpenAI.ChatCompletionMessageFunctionToolCall;
    expect(toolCall.function.name).toBe("get_weather");
    expect(JSON.parse(toolCall.function.arguments)).toEqual({ city: "mock", unit: "celsius" });
    expect(data.usage).toMatchObject({ prompt_tokens_details: { cached_tokens: 0 }, completion_tokens_details: { reasoning_tokens: 0 } });
    await expectCharged(c, before, response, data.usage!, { cap: 60 });
  });

  it("streamed: tool-call deltas arrive as the provider sends them and rebuild the arguments", async () => {
    const c = await customer(stack, op, { units: 1_000_000, alias: "chat", defaultModel: "small" });
    const before = (await balance(stack, c)).available_units;
    const dictated = [
      { name: "get_weather", arguments: JSON.stringify({ city: "Reykjavík, Ísland 🌋", unit: "celsius" }) },
      { name: "get_time", arguments: "{}" },
    ];
    provider.set({ toolCalls: dictated });
    const { data: stream, response } = await sdk(stack, c, "chat")
      .chat.completions.create({
        model: "small",
        messages: ask,
        tools: [weather, clock],
        max_tokens: 80,
        stream: true,
        stream_options: { include_usage: true },
      })
      .withResponse();
    const calls: { id?: string; name: string; arguments: string }[] = [];
    let pieces = 0;
    let finish: string | null = null;
    let usage: Usage | undefined;
    for await (const chunk of stream) {
      expect(chunk.model).toBe("small");
      for (const delta of chunk.choices[0]?.delta?.tool_calls ?? []) {
        pieces++;
        calls[delta.index] ??= { name: "", arguments: "" };
        if (delta.id) calls[delta.index]!.id = delta.id;
        if (delta.function?.name) calls[delta.index]!.name += delta.function.name;
        calls[delta.index]!.arguments += delta.function?.arguments ?? "";
      }
      finish = chunk.choices[0]?.finish_reason ?? finish;
      if (chunk.usage) usage = chunk.usage;
    }
    expect(calls.map(({ name, arguments: args }) => ({ name, arguments: args }))).toEqual(dictated);
    expect(calls.every((c) => c.id?.startsWith("call_"))).toBe(true);
    expect(pieces).toBeGreaterThan(dictated.length + 2); // the arguments came in pieces, relayed one by one
    expect(finish).toBe("tool_calls");
    expect(chatCalls().at(-1)!.body).toMatchObject({ stream: true, stream_options: { include_usage: true }, max_tokens: 80, tools: [weather, clock] });
    await expectCharged(c, before, response, usage!, { cap: 80 });
  });

  it("a two-turn tool loop: the assistant's tool calls (content null) and the tool's result go back, and both turns are charged", async () => {
    const c = await customer(stack, op, { units: 1_000_000, alias: "chat", defaultModel: "small" });
    const client = sdk(stack, c, "chat");
    const start = (await balance(stack, c)).available_units;
    const first = await client.chat.completions.create({ model: "small", messages: ask, tools: [weather], max_tokens: 40 }).withResponse();
    const charge1 = await expectCharged(c, start, first.response, first.data.usage!, { cap: 40 });

    const assistant = first.data.choices[0]!.message;
    const toolCall = assistant.tool_calls![0] as OpenAI.ChatCompletionMessageFunctionToolCall;
    // The answer's message goes back as the SDK returned it (content null, refusal null, annotations).
    expect(assistant).toMatchObject({ role: "assistant", content: null, refusal: null, annotations: [] });
    const turn: OpenAI.ChatCompletionMessageParam[] = [
      ...ask,
      assistant,
      { role: "tool", tool_call_id: toolCall.id, content: JSON.stringify({ temperature_c: 21, sky: "clear" }) },
    ];
    const second = await client.chat.completions.create({ model: "small", messages: turn, tools: [weather], max_tokens: 40 }).withResponse();
    expect(chatCalls().at(-1)!.body).toMatchObject({ messages: turn });
    expect(second.data.choices[0]).toMatchObject({
      finish_reason: "stop",
      message: { content: 'Mock reply to tool results: {"temperature_c":21,"sky":"clear"}' },
    });
    // The second turn reads more (the call and its result): a larger prompt, a larger reservation.
    expect(second.data.usage!.prompt_tokens).toBeGreaterThan(first.data.usage!.prompt_tokens);
    const charge2 = await expectCharged(c, start - Number(charge1), second.response, second.data.usage!, { cap: 40 });
    expect((await balance(stack, c)).available_units).toBe(start - Number(charge1 + charge2));
  });
});

describe("images", () => {
  it("are refused (400 naming images, no provider call) until the model has max_tokens_per_image, then reserved at it per image", async () => {
    const vision = await managedModel(stack, op, { alias: "vision", upstreamId: "mock", inputPerMtok: 250_000_003, outputPerMtok: 1_000_000_007 });
    const c = await customer(stack, op, { units: 1_000_000, alias: "eyes", defaultModel: "vision" });
    const client = sdk(stack, c, "eyes");
    const text = "What is in these pictures?";
    const withImages: OpenAI.ChatCompletionMessageParam[] = [
      {
        role: "user",
        content: [
          { type: "text", text },
          {
            type: "image_url",
            image_url: { url: "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==" },
          },
          { type: "image_url", image_url: { url: "https://images.example.com/cat.jpg", detail: "low" } },
        ],
      },
    ];
    const refused = await client.chat.completions.create({ model: "vision", messages: withImages, max_tokens: 30 }).catch((e: unknown) => e);
    expect(refused).toMatchObject({ status: 400, error: "invalid_request" });
    // The contract's error body (the SDK keeps only its code): the message names images.
    const body = (await invoke(c, "eyes", { model: "vision", messages: withImages, max_tokens: 30 })).body;
    expect(body).toMatchObject({ error: "invalid_request", param: "messages" });
    expect(body.message).toMatch(/images.*max_tokens_per_image/);
    expect(chatCalls()).toHaveLength(0);
    expect(await balance(stack, c)).toEqual({ available_units: 1_000_000, reserved_units: 0 });

    const put = await call(stack.edgeUrl, "PUT", "/ops/ai/models/vision", {
      token: op.token,
      body: { upstream_id: "mock", upstream_model: "mock-small", max_tokens_per_image: 1_000 },
    });
    expect(put.body.data).toMatchObject({ max_tokens_per_image: 1_000 });
    const { data, response } = await client.chat.completions.create({ model: "vision", messages: withImages, max_tokens: 30 }).withResponse();
    expect(chatCalls().at(-1)!.body).toMatchObject({ messages: withImages });
    // The bound: 3 + (4 + "user" + the text + 1 per part) + 1000 per image; output 30.
    const bound = BigInt(3 + 4 + 4 + Buffer.byteLength(text) + 3 + 2 * 1_000);
    expect(response.headers.get("x-service-estimated-cost")).toBe(usd(expectedCost(bound, 30n, vision)));
    expect(data.usage!.prompt_tokens).toBeGreaterThan(2 * 85);
    await expectCharged(c, 1_000_000, response, data.usage!, { cap: 30 }, vision);
  });
});

describe("choices, formats and the answer as the provider gave it", () => {
  it("n: 2 reserves the cap for each choice and returns both, charged on their summed usage", async () => {
    const c = await customer(stack, op, { units: 1_000_000, alias: "chat", defaultModel: "small" });
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: "user", content: "Two ideas, please" }];
    const { data, response } = await sdk(stack, c, "chat").chat.completions.create({ model: "small", messages, n: 2, max_tokens: 25 }).withResponse();
    expect(data.choices.map((ch) => ch.index)).toEqual([0, 1]);
    expect(data.choices.map((ch) => ch.message.content)).toEqual(["Mock reply to: Two ideas, please", "Mock reply to: Two ideas, please"]);
    expect(chatCalls().at(-1)!.body).toMatchObject({ n: 2, max_tokens: 25 });
    expect(response.headers.get("x-service-estimated-cost")).toBe(usd(expectedCost(inputBound(messages as never), 2n * 25n, model)));
    expect(data.usage!.completion_tokens).toBe(2 * Math.ceil(Buffer.byteLength("Mock reply to: Two ideas, please") / 4));
    await expectCharged(c, 1_000_000, response, data.usage!, { cap: 25, choices: 2 });
  });

  it("response_format json_schema passes through and the answer parses against it", async () => {
    const c = await customer(stack, op, { units: 1_000_000, alias: "chat", defaultModel: "small" });
    const format: OpenAI.ResponseFormatJSONSchema = {
      type: "json_schema",
      json_schema: {
        name: "city",
        strict: true,
        schema: {
          type: "object",
          properties: { name: { type: "string" }, population: { type: "integer" }, capital: { type: "boolean" } },
          required: ["name", "population", "capital"],
          additionalProperties: false,
        },
      },
    };
    const { data, response } = await sdk(stack, c, "chat")
      .chat.completions.create({ model: "small", messages: ask, response_format: format, max_completion_tokens: 50, seed: 3, temperature: 0 })
      .withResponse();
    expect(chatCalls().at(-1)!.body).toEqual({
      model: "mock-small",
      messages: ask,
      response_format: format,
      max_completion_tokens: 50,
      seed: 3,
      temperature: 0,
    });
    expect(JSON.parse(data.choices[0]!.message.content!)).toEqual({ name: "mock", population: 1, capital: true });
    await expectCharged(c, 1_000_000, response, data.usage!, { cap: 50 });
  });

  it("refusals and logprobs come back unchanged", async () => {
    const c = await customer(stack, op, { units: 1_000_000, alias: "chat", defaultModel: "small" });
    provider.set({ refusal: "I can't help with that." });
    const refused = await sdk(stack, c, "chat").chat.completions.create({ model: "small", messages: ask, max_tokens: 20 }).withResponse();
    expect(refused.data.choices[0]!.message).toMatchObject({ content: null, refusal: "I can't help with that." });
    const afterRefusal = 1_000_000 - Number(await expectCharged(c, 1_000_000, refused.response, refused.data.usage!, { cap: 20 }));
    provider.reset();
    const scored = await sdk(stack, c, "chat")
      .chat.completions.create({ model: "small", messages: ask, logprobs: true, top_logprobs: 2, max_tokens: 20 })
      .withResponse();
    expect(scored.data.choices[0]!.logprobs!.content!.map((l) => l.token).join("")).toBe(scored.data.choices[0]!.message.content);
    await expectCharged(c, afterRefusal, scored.response, scored.data.usage!, { cap: 20 });
  });
});

describe("refused fields", () => {
  it("a top-level field not in section 6b gets 400 naming it, with no provider call and no charge; max_cost is the gateway's own", async () => {
    const c = await customer(stack, op, { units: 1_000_000, alias: "chat", defaultModel: "small" });
    const client = sdk(stack, c, "chat");
    const extras: Record<string, unknown> = {
      service_tier: "flex",
      audio: { voice: "alloy", format: "wav" },
      modalities: ["text", "audio"],
      web_search_options: {},
      functions: [{ name: "f" }],
      prediction: { type: "content", content: "x" },
      store: true,
      metadata: { a: "b" },
    };
    for (const [field, value] of Object.entries(extras)) {
      const error = await client.chat.completions.create({ model: "small", messages: ask, max_tokens: 10, [field]: value } as never).catch((e: unknown) => e);
      expect(error, field).toMatchObject({ status: 400, error: "invalid_request" });
      const body = (await invoke(c, "chat", { model: "small", messages: ask, max_tokens: 10, [field]: value })).body;
      expect(body, field).toMatchObject({ error: "invalid_request", param: field });
      expect(body.message, field).toContain(field);
    }
    expect(chatCalls()).toHaveLength(0);
    expect(await balance(stack, c)).toEqual({ available_units: 1_000_000, reserved_units: 0 });

    // max_cost is accepted and never forwarded.
    const { data, response } = await client.chat.completions.create({ model: "small", messages: ask, max_tokens: 10, max_cost: 5 } as never).withResponse();
    expect(chatCalls().at(-1)!.body).not.toHaveProperty("max_cost");
    await expectCharged(c, 1_000_000, response, (data as OpenAI.ChatCompletion).usage!, { cap: 10 });
  });

  it("a stream whose client did not ask for usage gets no usage chunk, tool calls or not", async () => {
    const c = await customer(stack, op, { units: 1_000_000, alias: "chat", defaultModel: "small" });
    const res = await fetch(`${stack.edgeUrl}/v1/apps/ai/chat/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": c.key },
      body: JSON.stringify({ messages: ask, tools: [weather], stream: true, max_tokens: 30 }),
    });
    const body = await res.text();
    expect(body).toContain('"tool_calls"');
    expect(body).not.toContain('"usage":{');
    expect(body.trimEnd().endsWith("data: [DONE]")).toBe(true);
    expect(chatCalls().at(-1)!.body).toMatchObject({ stream_options: { include_usage: true } });
    const record = await usageRecord(stack, res.headers.get("x-request-id")!);
    expect(record!.status).toBe("completed");
    expect((await balanceWithin1s(stack, c, { available_units: 1_000_000 - Number(record!.final_units) })).available_units).toBe(
      1_000_000 - Number(record!.final_units),
    );
  });
});
