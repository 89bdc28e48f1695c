/*
 * The provider's chat answer as an Anthropic message (CONTRACT.md 6c, decision 0207).
 */

export type StopReason = "end_turn" | "max_tokens" | "stop_sequence" | "tool_use";
export type Stop = { stop_reason: StopReason; stop_sequence: string | null };
export type MessageUsage = { input_tokens: number; output_tokens: number };

type Json = Record<string, unknown>;

/**
 * `stop_reason` from the choice's `finish_reason`: length → max_tokens, tool_calls →
 * tool_use, anything else → end_turn. The chat API does not say which stop sequence
 * ended a choice; a provider that does (vLLM's `stop_reason`, the matched string)
 * gives stop_sequence with it.
 */
export function stopOf(finishReason: unknown, matched: unknown, stopSequences: readonly string[]): Stop {
  if (finishReason === "length") return { stop_reason: "max_tokens", stop_sequence: null };
  if (finishReason === "tool_calls" || finishReason === "function_call") return { stop_reason: "tool_use", stop_sequence: null };
  if (finishReason === "stop" && typeof matched === "string" && stopSequences.includes(matched))
    return { stop_reason: "stop_sequence", stop_sequence: matched };
  return { stop_reason: "end_turn", stop_sequence: null };
}

const count = (n: unknown) => (typeof n === "number" && Number.isSafeInteger(n) && n >= 0 ? n : 0);

/** The provider's reported usage as Anthropic's: prompt → input, completion → output (what the charge is computed from). */
export function usageOf(usage: unknown): MessageUsage {
  const u = (usage ?? {}) as Json;
  return { input_tokens: count(u.prompt_tokens), output_tokens: count(u.completion_tokens) };
}

/** A tool call's arguments as a tool_use input: the JSON object they hold, else an empty one. */
export function inputOf(args: unknown): Json {
  if (typeof args !== "string" || args.trim() === "") return {};
  try {
    const value: unknown = JSON.parse(args);
    return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Json) : {};
  } catch {
    return {};
  }
}

/** The message id of a request: `msg_` and the gateway's request id (X-Request-ID) without its prefix. */
export const messageId = (requestId: string) => `msg_${requestId.replace(/^req_/, "")}`;

/**
 * The answer's first choice as `{id, type: "message", role, model, content: [text,
 * tool_use...], stop_reason, stop_sequence, usage}` (the route asks for one choice):
 * its text (or refusal) as a text block, then each tool call as a tool_use block.
 */
export function messageOf(answer: Json, context: { id: string; stopSequences: readonly string[] }) {
  const choice = ((Array.isArray(answer.choices) ? answer.choices : [])[0] ?? {}) as Json;
  const message = (choice.message ?? {}) as Json;
  const content: Json[] = [];
  const text = typeof message.content === "string" ? message.content : typeof message.refusal === "string" ? message.refusal : "";
  if (text !== "") content.push({ type: "text", text });
  for (const call of Array.isArray(message.tool_calls) ? (message.tool_calls as Json[]) : []) {
    const fn = (call.function ?? {}) as Json;
    content.push({ type: "tool_use", id: String(call.id ?? ""), name: String(fn.name ?? ""), input: inputOf(fn.arguments) });
  }
  return {
    id: context.id,
    type: "message",
    role: "assistant",
    model: typeof answer.model === "string" ? answer.model : "",
    content,
    ...stopOf(choice.finish_reason, choice.stop_reason, context.stopSequences),
    usage: usageOf(answer.usage),
  };
}
