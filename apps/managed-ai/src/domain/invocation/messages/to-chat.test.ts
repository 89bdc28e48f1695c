import { describe, expect, it } from "vitest";
import { parseChatRequest } from "../chat-request.js";
import { chatInputBound, utf8Bytes } from "../tokens.js";
import { chatRequestOf, notTooDeep, readMessagesBody } from "./to-chat.js";

function refusal(body: unknown, options: { countTokens: true } | undefined = undefined): { code?: string; message?: string; param?: string } {
  try {
    if (options) readMessagesBody(body, options);
    else readMessagesBody(body);
  } catch (err) {
    const e = err as { code?: string; message?: string; extra?: { param?: string } };
    return { code: e.code, message: e.message, param: e.extra?.param };
  }
  return {};
}

const weather = {
  name: "get_weather",
  description: "The weather now in a city.",
  input_schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
};
const cache = { type: "ephemeral" };
const png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";

/** A tool loop's second turn with everything 6c lists, cache_control sprinkled as Claude Code does. */
const full = {
  model: "small",
  max_tokens: 300,
  system: [
    { type: "text", text: "You are terse." },
    { type: "text", text: "Use the tools.", cache_control: cache },
  ],
  messages: [
    {
      role: "user",
      content: [
        { type: "text", text: "Weather in Paris? Here is a map." },
        { type: "image", source: { type: "base64", media_type: "image/png", data: png }, cache_control: cache },
        { type: "image", source: { type: "url", url: "https://maps.example.com/paris.png" } },
      ],
    },
    {
      role: "assistant",
      content: [
        { type: "text", text: "Let me look." },
        { type: "tool_use", id: "toolu_1", name: "get_weather", input: { city: "Paris" } },
        { type: "tool_use", id: "toolu_2", name: "get_weather", input: { city: "Lyon" }, cache_control: cache },
      ],
    },
    {
      role: "user",
      content: [
        { type: "tool_result", tool_use_id: "toolu_1", content: "21 °C, clear", cache_control: cache },
        {
          type: "tool_result",
          tool_use_id: "toolu_2",
          is_error: false,
          content: [
            { type: "text", text: "18 °C" },
            { type: "image", source: { type: "base64", media_type: "image/jpeg", data: "AAAA" } },
          ],
        },
        { type: "text", text: "And tomorrow?" },
      ],
    },
    { role: "system", content: "Answer in one line." },
  ],
  tools: [{ ...weather, cache_control: cache }],
  tool_choice: { type: "auto", disable_parallel_tool_use: true },
  stop_sequences: ["\n\nHuman:"],
  temperature: 0.5,
  top_p: 0.9,
  top_k: 40,
  stream: true,
  metadata: { user_id: "user-1" },
  thinking: { type: "enabled", budget_tokens: 1024 },
};

describe("readMessagesBody (CONTRACT.md 6c)", () => {
  it("accepts every documented field, cache_control on blocks and tools, thinking, metadata and top_k", () => {
    expect(refusal(full)).toEqual({});
    expect(refusal({ ...full, thinking: { type: "adaptive", display: "omitted" } })).toEqual({});
    expect(refusal({ ...full, thinking: { type: "disabled" } })).toEqual({});
    for (const choice of [{ type: "any" }, { type: "tool", name: "get_weather" }, { type: "none" }, { type: "auto" }]) {
      expect(refusal({ ...full, tool_choice: choice })).toEqual({});
    }
  });

  it("refuses any other top-level field by name, whatever its value, before the rest is read", () => {
    for (const field of ["output_config", "context_management", "max_cost", "service_tier", "container", "mcp_servers", "n", "messages_extra"]) {
      expect(refusal({ ...full, [field]: null }), field).toMatchObject({ code: "invalid_request", param: field });
    }
    expect(refusal({ model: "small", messages: [], output_config: {} })).toMatchObject({ param: "output_config" });
  });

  it("refuses what 6c does not list inside the body, by path", () => {
    const user = (content: unknown) => ({ model: "small", max_tokens: 10, messages: [{ role: "user", content }] });
    expect(refusal(user([{ type: "document", source: { type: "text", data: "x", media_type: "text/plain" } }]))).toMatchObject({ param: "messages" });
    expect(refusal(user([{ type: "text", text: "x", citations: [] }])).message).toMatch(/^messages\.0\.content/);
    expect(refusal(user([{ type: "image", source: { type: "url", url: "http://plain.example.com/a.png" } }])).message).toMatch(/https/);
    expect(refusal(user([{ type: "image", source: { type: "base64", media_type: "image/tiff", data: "AAAA" } }])).param).toBe("messages");
    expect(refusal({ ...user("hi"), messages: [{ role: "assistant", content: [{ type: "thinking", thinking: "hm", signature: "s" }] }] }).param).toBe(
      "messages",
    );
    expect(refusal({ ...user("hi"), tools: [{ ...weather, defer_loading: true }] })).toMatchObject({ param: "tools" });
    expect(refusal({ ...user("hi"), tools: [{ type: "web_search_20250305", name: "web_search" }] })).toMatchObject({ param: "tools" });
    expect(refusal({ ...user("hi"), tools: [{ ...weather, name: "has space" }] }).message).toMatch(/tools\.0\.name/);
    expect(refusal({ ...user("hi"), stop_sequences: ["a", "b", "c", "d", "e"] })).toMatchObject({ param: "stop_sequences" });
    expect(refusal({ ...user("hi"), temperature: 1.5 })).toMatchObject({ param: "temperature" });
    expect(refusal({ ...user("hi"), metadata: { user_id: "u", tags: [] } })).toMatchObject({ param: "metadata" });
    expect(refusal({ model: "small", messages: [{ role: "user", content: "hi" }] })).toMatchObject({ param: "max_tokens" });
    expect(refusal({ model: "small", messages: [{ role: "user", content: "hi" }] }, { countTokens: true })).toEqual({});
    expect(refusal([1])).toMatchObject({ code: "invalid_request", message: "The body must be a JSON object." });
  });

  it("a tool input nested deeper than the stack is 400, not an internal error", () => {
    let deep: Record<string, unknown> = {};
    for (let i = 0; i < 50_000; i++) deep = { a: deep };
    const body = readMessagesBody({
      model: "small",
      max_tokens: 5,
      messages: [
        { role: "user", content: "go" },
        { role: "assistant", content: [{ type: "tool_use", id: "t", name: "f", input: deep }] },
      ],
    });
    expect(() => notTooDeep(() => JSON.stringify(chatRequestOf(body)))).toThrow(
      expect.objectContaining({ code: "invalid_request", message: "The request is nested too deeply." }),
    );
  });
});

describe("chatRequestOf: the chat request of CONTRACT.md 6b", () => {
  const chat = chatRequestOf(readMessagesBody(full));

  it("translates system, blocks, tool use and results, tools, tool_choice, stops and sampling; forwards nothing else", () => {
    expect(chat).toEqual({
      model: "small",
      max_tokens: 300,
      messages: [
        {
          role: "system",
          content: [
            { type: "text", text: "You are terse." },
            { type: "text", text: "Use the tools." },
          ],
        },
        {
          role: "user",
          content: [
            { type: "text", text: "Weather in Paris? Here is a map." },
            { type: "image_url", image_url: { url: `data:image/png;base64,${png}` } },
            { type: "image_url", image_url: { url: "https://maps.example.com/paris.png" } },
          ],
        },
        {
          role: "assistant",
          content: "Let me look.",
          tool_calls: [
            { id: "toolu_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } },
            { id: "toolu_2", type: "function", function: { name: "get_weather", arguments: '{"city":"Lyon"}' } },
          ],
        },
        { role: "tool", tool_call_id: "toolu_1", content: "21 °C, clear" },
        { role: "tool", tool_call_id: "toolu_2", content: [{ type: "text", text: "18 °C" }] },
        {
          role: "user",
          content: [
            { type: "text", text: "And tomorrow?" },
            { type: "image_url", image_url: { url: "data:image/jpeg;base64,AAAA" } },
          ],
        },
        { role: "system", content: "Answer in one line." },
      ],
      tools: [{ type: "function", function: { name: "get_weather", description: "The weather now in a city.", parameters: weather.input_schema } }],
      tool_choice: "auto",
      parallel_tool_calls: false,
      stop: ["\n\nHuman:"],
      temperature: 0.5,
      top_p: 0.9,
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(JSON.stringify(chat)).not.toMatch(/cache_control|budget_tokens|user-1|top_k|thinking|metadata/);
  });

  it("maps tool_choice any → required, tool → the function, none → none; no tool_choice without tools", () => {
    const of = (tool_choice: unknown, tools: unknown = [weather]) => chatRequestOf(readMessagesBody({ ...full, tools, tool_choice }));
    expect(of({ type: "any" })).toMatchObject({ tool_choice: "required" });
    expect(of({ type: "any" })).not.toHaveProperty("parallel_tool_calls");
    expect(of({ type: "tool", name: "get_weather" })).toMatchObject({ tool_choice: { type: "function", function: { name: "get_weather" } } });
    expect(of({ type: "none" })).toMatchObject({ tool_choice: "none" });
    expect(of({ type: "auto" }, [])).not.toHaveProperty("tool_choice");
  });

  it("an assistant turn of tool calls only has content null; a user turn of tool results only has no user message", () => {
    const body = chatRequestOf(
      readMessagesBody({
        model: "small",
        max_tokens: 5,
        messages: [
          { role: "user", content: "go" },
          { role: "assistant", content: [{ type: "tool_use", id: "t", name: "get_weather", input: {} }] },
          { role: "user", content: [{ type: "tool_result", tool_use_id: "t" }] },
        ],
        tools: [weather],
      }),
    );
    expect(body.messages).toEqual([
      { role: "user", content: "go" },
      { role: "assistant", content: null, tool_calls: [{ id: "t", type: "function", function: { name: "get_weather", arguments: "{}" } }] },
      { role: "tool", tool_call_id: "t", content: "" },
    ]);
  });

  it("is a valid 6b request whose bound counts every text the provider reads and each image at max_tokens_per_image", () => {
    const parsed = parseChatRequest(chat);
    expect(parsed.imageParts).toBe(3);
    expect(parsed.passthrough).toEqual({
      tools: chat.tools,
      tool_choice: "auto",
      parallel_tool_calls: false,
      stop: ["\n\nHuman:"],
      temperature: 0.5,
      top_p: 0.9,
    });
    expect(parsed.inputTokens).toBe(chatInputBound(chat as never).tokens);
    // Every text of the Anthropic request is in the translation, so in the bound.
    const texts = [
      "You are terse.",
      "Use the tools.",
      "Weather in Paris? Here is a map.",
      "Let me look.",
      '{"city":"Paris"}',
      "21 °C, clear",
      "18 °C",
      "And tomorrow?",
    ];
    expect(parsed.inputTokens).toBeGreaterThan(BigInt(texts.reduce((sum, t) => sum + utf8Bytes(t), 0)));
    // A count_tokens body bounds the same input.
    const { max_tokens: _cap, stream: _stream, ...count } = full;
    expect(parseChatRequest(chatRequestOf(readMessagesBody(count, { countTokens: true }))).inputTokens).toBe(parsed.inputTokens);
  });
});
