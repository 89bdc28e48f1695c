import { describe, expect, it } from "vitest";
import { parseChatRequest } from "./chat-request.js";
import { inputTokenUpperBound } from "./tokens.js";

const messages = [{ role: "user", content: "hi" }];

function refusal(body: unknown): { code?: string; message?: string; param?: string } {
  try {
    parseChatRequest(body);
  } catch (err) {
    const e = err as { code?: string; message?: string; extra?: { param?: string } };
    return { code: e.code, message: e.message, param: e.extra?.param };
  }
  return {};
}

/** An agent loop's second turn, as the SDKs send it. */
const toolTurn = [
  { role: "system", content: "Use the tools." },
  { role: "user", content: "Weather in Paris?" },
  {
    role: "assistant",
    content: null,
    tool_calls: [{ id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } }],
  },
  { role: "tool", tool_call_id: "call_1", content: '{"temp_c":21}' },
];
const weatherTool = {
  type: "function",
  function: {
    name: "get_weather",
    description: "Weather now",
    parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"], additionalProperties: false },
    strict: true,
  },
};

describe("parseChatRequest (CONTRACT.md 6b)", () => {
  it("accepts every documented field and forwards the provider's ones unchanged", () => {
    const body = {
      messages: toolTurn,
      model: "small",
      tools: [weatherTool],
      tool_choice: { type: "function", function: { name: "get_weather" } },
      parallel_tool_calls: false,
      response_format: { type: "json_schema", json_schema: { name: "answer", schema: { type: "object" }, strict: true } },
      n: 3,
      stop: ["\n\n"],
      seed: 7,
      temperature: 0.2,
      top_p: 0.9,
      presence_penalty: 0.1,
      frequency_penalty: -0.1,
      logit_bias: { "50256": -100 },
      logprobs: true,
      top_logprobs: 2,
      user: "u-1",
      max_completion_tokens: 40,
      reasoning_effort: "low",
      stream: true,
      stream_options: { include_usage: false, include_obfuscation: false },
      max_cost: 0.5,
    };
    const r = parseChatRequest(body);
    expect(r).toMatchObject({
      model: "small",
      maxTokens: 40,
      maxTokensParam: "max_completion_tokens",
      choices: 3,
      maxCostUsd: 0.5,
      stream: true,
      includeUsage: false,
      streamOptions: { include_obfuscation: false },
      imageParts: 0,
    });
    expect(r.messages).toBe(body.messages);
    const { messages: _m, model: _model, max_completion_tokens: _c, max_cost: _cost, stream: _s, stream_options: _o, ...provider } = body;
    expect(r.passthrough).toEqual(provider);
  });

  it("accepts every role and content form", () => {
    const r = parseChatRequest({
      messages: [
        { role: "developer", content: [{ type: "text", text: "be brief" }], name: "ops" },
        {
          role: "user",
          content: [
            { type: "text", text: "what is this?" },
            { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=", detail: "low" } },
            { type: "image_url", image_url: { url: "https://example.com/cat.png" } },
          ],
        },
        { role: "assistant", content: "", refusal: "I cannot help with that." },
        { role: "assistant", content: [{ type: "refusal", refusal: "No." }] },
        { role: "assistant", content: "fine", name: "bot" },
        // An answer's message sent back as the SDK returned it.
        { role: "assistant", content: "ok", refusal: null, annotations: [], audio: null, function_call: null },
        ...toolTurn,
      ],
    });
    expect(r.imageParts).toBe(2);
  });

  it("keeps the plain text request's bound as it always was", () => {
    const r = parseChatRequest({ messages, max_tokens: 50 });
    expect(r.inputTokens).toBe(inputTokenUpperBound([{ role: "user", text: "hi" }]));
    expect(r).toMatchObject({ maxTokens: 50, passthrough: {} });
    expect(r.maxTokensParam).toBeUndefined();
    expect(r.choices).toBeUndefined();
  });

  it("refuses a top-level field that is not on the list, naming it, whatever its value", () => {
    for (const field of [
      "service_tier",
      "audio",
      "modalities",
      "web_search_options",
      "functions",
      "function_call",
      "prediction",
      "store",
      "metadata",
      "unknown_thing",
    ]) {
      for (const value of [null, "x", { type: "x" }]) {
        const r = refusal({ messages, [field]: value });
        expect(r, field).toMatchObject({ code: "invalid_request", param: field });
        expect(r.message).toContain(field);
      }
    }
  });

  it("answers 400 naming the parameter for what is not a valid request", () => {
    const cases: [unknown, string][] = [
      [{ messages, n: 9 }, "n"],
      [{ messages, n: 0 }, "n"],
      [{ messages, tools: [{ type: "custom", custom: { name: "x" } }] }, "tools"],
      [{ messages, tools: [{ type: "function", function: { name: "has space" } }] }, "tools"],
      [{ messages, tools: [{ type: "function", function: { name: "f", parameters: {} }, cache: true }] }, "tools"],
      [{ messages, tool_choice: "sometimes" }, "tool_choice"],
      [{ messages, response_format: { type: "xml" } }, "response_format"],
      [{ messages, temperature: 3 }, "temperature"],
      [{ messages, logit_bias: { a: 1 } }, "logit_bias"],
      [{ messages, reasoning_effort: "extreme" }, "reasoning_effort"],
      [{ messages, stream_options: { include_usage: true, extra: 1 } }, "stream_options"],
      [{ messages: [{ role: "user", content: [{ type: "input_audio", input_audio: { data: "", format: "wav" } }] }] }, "messages"],
      [{ messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: "http://plain.example/x.png" } }] }] }, "messages"],
      [{ messages: [{ role: "system", content: [{ type: "image_url", image_url: { url: "https://x.example/a.png" } }] }] }, "messages"],
      [{ messages: [{ role: "assistant", content: null }] }, "messages"],
      [{ messages: [{ role: "assistant", content: "x", audio: { id: "audio_1" } }] }, "messages"],
      [{ messages: [{ role: "assistant", content: "x", function_call: { name: "f", arguments: "{}" } }] }, "messages"],
      [{ messages: [{ role: "tool", content: "x" }] }, "messages"],
      [{ messages: [{ role: "function", name: "f", content: "x" }] }, "messages"],
      [{ messages: [] }, "messages"],
      [{}, "messages"],
      [{ messages, max_tokens: 0 }, "max_tokens"],
      [{ messages, max_tokens: 5, max_completion_tokens: 6 }, "max_completion_tokens"],
      [{ messages, max_cost: -1 }, "max_cost"],
      [{ messages, model: "bad alias!" }, "model"],
    ];
    for (const [body, param] of cases) {
      expect(refusal(body), JSON.stringify(body)).toMatchObject({ code: "invalid_request", param });
    }
    expect(() => parseChatRequest([1])).toThrow(/JSON object/);
  });

  it("answers 400, not a crash, for tools nested deeper than the stack", () => {
    let deep: unknown = {};
    for (let i = 0; i < 200_000; i++) deep = { a: deep };
    const r = refusal({ messages, tools: [{ type: "function", function: { name: "f", parameters: { type: "object", properties: { x: deep } } } }] });
    expect(r.code).toBe("invalid_request");
  });
});
