import { describe, expect, it } from "vitest";
import { MessageEvents, type MessageEvent } from "./events.js";

const usage = { prompt_tokens: 120, completion_tokens: 17, total_tokens: 137, prompt_tokens_details: { cached_tokens: 0 } };

/** A chat stream's chunk of the first choice. */
const chunk = (delta: Record<string, unknown>, finish: string | null = null, extra: Record<string, unknown> = {}) => ({
  id: "chatcmpl-1",
  object: "chat.completion.chunk",
  model: "small",
  choices: [{ index: 0, delta, finish_reason: finish, ...extra }],
});

describe("MessageEvents: a chat stream as Anthropic's events", () => {
  it("text then two tool calls whose arguments arrive in pieces, each relayed as it comes; usage and stop at the end", () => {
    const events = new MessageEvents("msg_1", []);
    const out: MessageEvent[][] = [
      chunk({ role: "assistant", content: "" }),
      chunk({ content: "Let me " }),
      chunk({ content: "check." }),
      chunk({ tool_calls: [{ index: 0, id: "call_a", type: "function", function: { name: "get_weather", arguments: "" } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city"' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: ':"Paris"}' } }] }),
      chunk({ tool_calls: [{ index: 1, id: "call_b", type: "function", function: { name: "get_time", arguments: "{}" } }] }),
      chunk({}, "tool_calls"),
      { id: "chatcmpl-1", object: "chat.completion.chunk", model: "small", choices: [], usage },
    ].map((c) => events.chunk(c));
    out.push(events.end());

    expect(out[0]).toEqual([
      {
        type: "message_start",
        message: {
          id: "msg_1",
          type: "message",
          role: "assistant",
          model: "small",
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { input_tokens: 0, output_tokens: 0 },
        },
      },
    ]);
    expect(out[1]).toEqual([
      { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
      { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Let me " } },
    ]);
    expect(out[2]).toEqual([{ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "check." } }]);
    expect(out[3]).toEqual([
      { type: "content_block_stop", index: 0 },
      { type: "content_block_start", index: 1, content_block: { type: "tool_use", id: "call_a", name: "get_weather", input: {} } },
    ]);
    expect(out[4]).toEqual([{ type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: '{"city"' } }]);
    expect(out[5]).toEqual([{ type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: ':"Paris"}' } }]);
    expect(out[6]).toEqual([
      { type: "content_block_stop", index: 1 },
      { type: "content_block_start", index: 2, content_block: { type: "tool_use", id: "call_b", name: "get_time", input: {} } },
      { type: "content_block_delta", index: 2, delta: { type: "input_json_delta", partial_json: "{}" } },
    ]);
    expect(out[7]).toEqual([]);
    expect(out[8]).toEqual([]);
    expect(out[9]).toEqual([
      { type: "content_block_stop", index: 2 },
      { type: "message_delta", delta: { stop_reason: "tool_use", stop_sequence: null }, usage: { input_tokens: 120, output_tokens: 17 } },
      { type: "message_stop" },
    ]);
  });

  it("a stop sequence the provider names; a stream with no chunk still starts and ends", () => {
    const events = new MessageEvents("msg_2", ["END"]);
    events.chunk(chunk({ content: "abc" }));
    events.chunk(chunk({}, "stop", { stop_reason: "END" }));
    expect(events.end()).toEqual([
      { type: "content_block_stop", index: 0 },
      { type: "message_delta", delta: { stop_reason: "stop_sequence", stop_sequence: "END" }, usage: { input_tokens: 0, output_tokens: 0 } },
      { type: "message_stop" },
    ]);
    const empty = new MessageEvents("msg_3", []).end();
    expect(empty.map((e) => e.type)).toEqual(["message_start", "message_delta", "message_stop"]);
  });

  it("only the first choice is read", () => {
    const events = new MessageEvents("msg_4", []);
    const other = { ...chunk({ content: "x" }), choices: [{ index: 1, delta: { content: "other choice" }, finish_reason: null }] };
    expect(events.chunk(other).map((e) => e.type)).toEqual(["message_start"]);
  });
});
