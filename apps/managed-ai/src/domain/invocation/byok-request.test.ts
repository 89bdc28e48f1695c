import { describe, expect, it } from "vitest";
import { parseByokChatRequest } from "./byok-request.js";
import { parseChatRequest } from "./chat-request.js";
import { embeddingInputBound, embeddingUsageOf } from "./embed.js";
import { inputTokenUpperBound } from "./tokens.js";

describe("parseByokChatRequest", () => {
  it("passes every provider parameter through except the ones the gateway sets", () => {
    const r = parseByokChatRequest({
      messages: [{ role: "user", content: "hi" }],
      model: "gpt-4.1-mini",
      max_cost: 0.5,
      stream: true,
      stream_options: { include_usage: true },
      tools: [{ type: "function" }],
      n: 2,
      logit_bias: { "1": 1 },
    });
    expect(r).toMatchObject({ model: "gpt-4.1-mini", maxCostUsd: 0.5, stream: true, includeUsage: true, choices: 2 });
    expect(r.passthrough).toEqual({ tools: [{ type: "function" }], n: 2, logit_bias: { "1": 1 } });
    expect(r.maxTokensParam).toBeUndefined();
    expect(parseByokChatRequest({ messages: [{ role: "user", content: "x" }], max_completion_tokens: 9 })).toMatchObject({
      maxTokens: 9,
      maxTokensParam: "max_completion_tokens",
    });
  });

  it("bounds text like managed requests, and counts tools and non-text content by their JSON", () => {
    const text = parseByokChatRequest({ messages: [{ role: "user", content: "hello" }] });
    expect(text.inputTokens).toBe(inputTokenUpperBound([{ role: "user", text: "hello" }]));
    expect(text.imageParts).toBe(0);
    const rich = parseByokChatRequest({ messages: [{ role: "user", content: [{ type: "text", text: "hello" }] }], tools: [{ type: "function" }] });
    expect(rich.inputTokens).toBeGreaterThan(text.inputTokens + 20n);
  });

  it("refuses nothing that a managed model accepts (CONTRACT.md 6b), nulls included", () => {
    const body = {
      messages: [
        { role: "developer", content: [{ type: "text", text: "be brief" }] },
        { role: "user", content: [{ type: "image_url", image_url: { url: "https://x.example/a.png" } }] },
        { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "f", arguments: "{}" } }] },
        { role: "tool", tool_call_id: "c1", content: "42" },
      ],
      tools: [{ type: "function", function: { name: "f", parameters: { type: "object", properties: {} } } }],
      tool_choice: "required",
      parallel_tool_calls: true,
      response_format: { type: "json_schema", json_schema: { name: "r", schema: {} } },
      n: null,
      max_tokens: null,
      max_completion_tokens: 30,
      stream: null,
      stream_options: null,
      logprobs: true,
      top_logprobs: 1,
      reasoning_effort: "low",
    };
    const managed = parseChatRequest(body);
    const byok = parseByokChatRequest(body);
    expect(byok).toMatchObject({ maxTokens: 30, maxTokensParam: "max_completion_tokens", stream: false });
    expect(byok.choices).toBeUndefined();
    expect(byok.messages).toEqual(managed.messages);
    expect(byok.passthrough).toMatchObject(managed.passthrough);
  });

  it("refuses what cannot be a chat request", () => {
    for (const body of [
      [],
      { messages: [] },
      { messages: [{ content: "x" }] },
      { messages: [{ role: "user" }], model: "has space" },
      { messages: [{ role: "u" }], max_tokens: 0 },
    ]) {
      expect(() => parseByokChatRequest(body), JSON.stringify(body)).toThrow();
    }
    expect(() => parseByokChatRequest({ messages: [{ role: "u" }], max_tokens: 5, max_completion_tokens: 6 })).toThrow(/disagree/);
  });
});

describe("embeddings", () => {
  it("bound input tokens by UTF-8 bytes, or by token array length", () => {
    expect(embeddingInputBound("héllo")).toBe(6n);
    expect(embeddingInputBound(["ab", "c"])).toBe(3n);
    expect(embeddingInputBound([1, 2, 3])).toBe(3n);
    expect(embeddingInputBound([[1, 2], [3]])).toBe(3n);
  });

  it("read usage without completion tokens", () => {
    expect(embeddingUsageOf({ prompt_tokens: 4, total_tokens: 4 })).toMatchObject({ promptTokens: 4n, completionTokens: 0n });
    expect(embeddingUsageOf({ total_tokens: 4 })).toBeNull();
    expect(embeddingUsageOf(null)).toBeNull();
  });
});
