import { describe, expect, it } from "vitest";
import { inputOf, messageId, messageOf, stopOf } from "./answer.js";

const usage = { prompt_tokens: 120, completion_tokens: 17, total_tokens: 137, prompt_tokens_details: { cached_tokens: 0 } };

describe("messageOf: a chat completion as an Anthropic message", () => {
  it("text, then each tool call as tool_use with its arguments as input; usage as input/output tokens", () => {
    const answer = {
      id: "chatcmpl-1",
      object: "chat.completion",
      model: "small",
      choices: [
        {
          index: 0,
          message: {
            role: "assistant",
            content: "Checking.",
            refusal: null,
            tool_calls: [
              { id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } },
              { id: "call_2", type: "function", function: { name: "get_time", arguments: "" } },
            ],
          },
          finish_reason: "tool_calls",
        },
      ],
      usage,
    };
    expect(messageOf(answer, { id: messageId("req_01ABC"), stopSequences: [] })).toEqual({
      id: "msg_01ABC",
      type: "message",
      role: "assistant",
      model: "small",
      content: [
        { type: "text", text: "Checking." },
        { type: "tool_use", id: "call_1", name: "get_weather", input: { city: "Paris" } },
        { type: "tool_use", id: "call_2", name: "get_time", input: {} },
      ],
      stop_reason: "tool_use",
      stop_sequence: null,
      usage: { input_tokens: 120, output_tokens: 17 },
    });
  });

  it("a refusal is the text; no text is no block; no usage is zero", () => {
    const refused = messageOf(
      { model: "m", choices: [{ message: { content: null, refusal: "I can't." }, finish_reason: "stop" }] },
      { id: "msg_1", stopSequences: [] },
    );
    expect(refused).toMatchObject({ content: [{ type: "text", text: "I can't." }], stop_reason: "end_turn", usage: { input_tokens: 0, output_tokens: 0 } });
    expect(messageOf({ model: "m", choices: [{ message: { content: "" }, finish_reason: "length" }] }, { id: "msg_1", stopSequences: [] })).toMatchObject({
      content: [],
      stop_reason: "max_tokens",
    });
    expect(messageOf({}, { id: "msg_1", stopSequences: [] })).toMatchObject({ content: [], model: "", stop_reason: "end_turn" });
  });

  it("stop_reason from finish_reason; stop_sequence only when the provider names one the request sent", () => {
    expect(stopOf("stop", undefined, ["###"])).toEqual({ stop_reason: "end_turn", stop_sequence: null });
    expect(stopOf("stop", "###", ["###"])).toEqual({ stop_reason: "stop_sequence", stop_sequence: "###" });
    expect(stopOf("stop", "other", ["###"])).toEqual({ stop_reason: "end_turn", stop_sequence: null });
    expect(stopOf("stop", 50256, ["###"])).toEqual({ stop_reason: "end_turn", stop_sequence: null });
    expect(stopOf("length", null, [])).toEqual({ stop_reason: "max_tokens", stop_sequence: null });
    expect(stopOf("tool_calls", null, [])).toEqual({ stop_reason: "tool_use", stop_sequence: null });
    expect(stopOf("function_call", null, [])).toEqual({ stop_reason: "tool_use", stop_sequence: null });
    expect(stopOf("content_filter", null, [])).toEqual({ stop_reason: "end_turn", stop_sequence: null });
  });

  it("tool arguments that are not a JSON object become an empty input", () => {
    expect(inputOf('{"a":[1,{"b":null}]}')).toEqual({ a: [1, { b: null }] });
    for (const bad of ["", "  ", "[1]", "null", "42", '{"a":', undefined, 7]) expect(inputOf(bad), String(bad)).toEqual({});
  });
});
