import { describe, expect, it } from "vitest";
import { countTokens, exampleOf, promptTokens } from "./index.js";
import { providerPerFile, TEST_KEY } from "./testing/provider-per-file.js";

const KEY = TEST_KEY;
const provider = providerPerFile();

const chat = async (body: Record<string, unknown>): Promise<any> => {
  const res = await fetch(`${provider.url}/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "mock-small", ...body }),
  });
  return body.stream ? (await res.text()).split("\n\n").filter(Boolean) : res.json();
};

const weather = {
  type: "function",
  function: {
    name: "get_weather",
    parameters: {
      type: "object",
      properties: { city: { type: "string" }, unit: { type: "string", enum: ["c", "f"] }, days: { type: "integer" } },
      required: ["city"],
    },
  },
};
const clock = { type: "function", function: { name: "get_time", parameters: { type: "object", properties: {} } } };
const ask = [{ role: "user", content: "Weather in Paris?" }];

describe("tool calls", () => {
  it("calls the first tool (or the one tool_choice names) with arguments that fit its schema, and counts tools in the prompt", async () => {
    const body = await chat({ messages: ask, tools: [weather, clock] });
    const call = body.choices[0].message.tool_calls[0];
    expect(body.choices[0]).toMatchObject({ finish_reason: "tool_calls", message: { role: "assistant", content: null } });
    expect(call).toMatchObject({ id: expect.stringMatching(/^call_/), type: "function", function: { name: "get_weather" } });
    expect(JSON.parse(call.function.arguments)).toEqual({ city: "mock", unit: "c", days: 1 });
    expect(body.usage.prompt_tokens).toBe(promptTokens(ask, { tools: [weather, clock] }));
    expect(body.usage.prompt_tokens).toBeGreaterThan(promptTokens(ask) + 2 * 7 + 12);
    expect(body.usage.completion_tokens).toBe(countTokens(`get_weather${call.function.arguments}`));

    const named = await chat({ messages: ask, tools: [weather, clock], tool_choice: { type: "function", function: { name: "get_time" } } });
    expect(named.choices[0].message.tool_calls[0].function).toEqual({ name: "get_time", arguments: "{}" });
    const none = await chat({ messages: ask, tools: [weather], tool_choice: "none" });
    expect(none.choices[0]).toMatchObject({ finish_reason: "stop", message: { content: "Mock reply to: Weather in Paris?" } });
  });

  it("answers the tool results in text, counting the calls and results as prompt", async () => {
    const turn = [
      ...ask,
      { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } }] },
      { role: "tool", tool_call_id: "call_1", content: '{"temp_c":21}' },
    ];
    const body = await chat({ messages: turn, tools: [weather] });
    expect(body.choices[0]).toMatchObject({ finish_reason: "stop", message: { content: 'Mock reply to tool results: {"temp_c":21}' } });
    expect(body.usage.prompt_tokens).toBe(promptTokens(turn, { tools: [weather] }));
    // A note or a system turn after the results (as Claude Code sends them) still gets the answer, not another call.
    const noted = await chat({ messages: [...turn, { role: "user", content: "(a reminder)" }, { role: "system", content: "Be brief." }], tools: [weather] });
    expect(noted.choices[0]).toMatchObject({ finish_reason: "stop", message: { content: 'Mock reply to tool results: {"temp_c":21}' } });
    // A new user turn after the answer is a new question: the model calls a tool again.
    const next = await chat({ messages: [...turn, { role: "assistant", content: "21" }, { role: "user", content: "And Lyon?" }], tools: [weather] });
    expect(next.choices[0].finish_reason).toBe("tool_calls");
  });

  it("makes the calls a test dictates, and streams their deltas: id and name first, then the arguments in pieces", async () => {
    provider.set({
      toolCalls: [
        { name: "get_weather", arguments: '{"city":"Reykjavík, Iceland"}' },
        { name: "get_time", arguments: "{}" },
      ],
    });
    const data = await chat({ messages: ask, tools: [weather, clock], stream: true, stream_options: { include_usage: true } });
    expect(data.at(-1)).toBe("data: [DONE]");
    const chunks = data.slice(0, -1).map((d: string) => JSON.parse(d.slice("data: ".length)));
    const deltas = chunks.flatMap((c: any) => c.choices.flatMap((ch: any) => ch.delta?.tool_calls ?? []));
    expect(deltas.filter((d: any) => d.id)).toHaveLength(2);
    const rebuilt: Record<number, { name: string; arguments: string }> = {};
    for (const d of deltas) {
      rebuilt[d.index] ??= { name: "", arguments: "" };
      if (d.function?.name) rebuilt[d.index]!.name = d.function.name;
      rebuilt[d.index]!.arguments += d.function?.arguments ?? "";
    }
    expect(Object.values(rebuilt)).toEqual([
      { name: "get_weather", arguments: '{"city":"Reykjavík, Iceland"}' },
      { name: "get_time", arguments: "{}" },
    ]);
    expect(deltas.filter((d: any) => !d.id).length).toBeGreaterThan(2);
    expect(chunks.at(-2).choices[0].finish_reason).toBe("tool_calls");
    expect(chunks.at(-1).usage.completion_tokens).toBe(countTokens('get_weather{"city":"Reykjavík, Iceland"}') + countTokens("get_time{}"));
  });
});

describe("choices, formats, refusals, logprobs", () => {
  it("answers n choices, usage summed over them, JSON and streamed", async () => {
    const body = await chat({ messages: ask, n: 3, max_tokens: 4 });
    expect(body.choices.map((c: any) => [c.index, c.message.content, c.finish_reason])).toEqual([
      [0, "Mock reply to: W", "length"],
      [1, "Mock reply to: W", "length"],
      [2, "Mock reply to: W", "length"],
    ]);
    expect(body.usage.completion_tokens).toBe(12);
    const data = await chat({ messages: ask, n: 2, stream: true, stream_options: { include_usage: true } });
    const chunks = data.slice(0, -1).map((d: string) => JSON.parse(d.slice("data: ".length)));
    for (const index of [0, 1]) {
      const text = chunks.flatMap((c: any) => c.choices.filter((ch: any) => ch.index === index).map((ch: any) => ch.delta.content ?? "")).join("");
      expect(text).toBe("Mock reply to: Weather in Paris?");
    }
    expect(chunks.at(-1).usage.completion_tokens).toBe(2 * countTokens("Mock reply to: Weather in Paris?"));
  });

  it("answers JSON that fits a json_schema response format, and counts the schema as prompt", async () => {
    const format = {
      type: "json_schema",
      json_schema: { name: "city", schema: { type: "object", properties: { name: { type: "string" }, population: { type: "integer" } } } },
    };
    const body = await chat({ messages: ask, response_format: format });
    expect(JSON.parse(body.choices[0].message.content)).toEqual({ name: "mock", population: 1 });
    expect(body.usage.prompt_tokens).toBe(promptTokens(ask, { response_format: format }));
    expect(JSON.parse((await chat({ messages: ask, response_format: { type: "json_object" } })).choices[0].message.content)).toEqual({
      reply: "Mock reply to: Weather in Paris?",
    });
    expect(exampleOf({ anyOf: [{ type: "null" }, { type: "string" }] })).toBeNull();
  });

  it("refuses when told to, returns logprobs when asked, and reports usage details", async () => {
    provider.set({ refusal: "I can't help with that." });
    expect((await chat({ messages: ask })).choices[0]).toMatchObject({ message: { content: null, refusal: "I can't help with that." }, finish_reason: "stop" });
    provider.reset();
    const body = await chat({ messages: ask, logprobs: true });
    expect(body.choices[0].logprobs.content.map((l: any) => l.token).join("")).toBe("Mock reply to: Weather in Paris?");
    expect(body.usage).toMatchObject({ prompt_tokens_details: { cached_tokens: 0 }, completion_tokens_details: { reasoning_tokens: 0 } });
  });

  it("counts each image part as 85 prompt tokens", async () => {
    const withImage = [
      {
        role: "user",
        content: [
          { type: "text", text: "What is it?" },
          { type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } },
        ],
      },
    ];
    expect((await chat({ messages: withImage })).usage.prompt_tokens).toBe(Math.ceil(11 / 4) + 3 + 3 + 85);
  });
});
