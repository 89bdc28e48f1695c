import type { ServerResponse } from "node:http";
import { countTokens, promptTokens, replyFor, streamPieces, toolResultsOf, truncateToTokens, type ChatMessage } from "./tokens.js";
import { exampleOf, toolCallsFor, type CallSpec, type ToolCall, type ToolDefinition } from "./tools.js";

export type ChatRequest = {
  model: string;
  messages: ChatMessage[];
  maxTokens: number | undefined;
  stream: boolean;
  includeUsage: boolean;
  tools: ToolDefinition[];
  toolChoice: unknown;
  responseFormat: { type?: string; json_schema?: { schema?: unknown } } | undefined;
  /** Choices asked for (`n`). */
  n: number;
  logprobs: boolean;
  /** Stop sequences (`stop`): a reply ends before the first one it contains. */
  stop: string[];
};

export type Usage = {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details: { cached_tokens: number; audio_tokens: number };
  completion_tokens_details: { reasoning_tokens: number; audio_tokens: number; accepted_prediction_tokens: number; rejected_prediction_tokens: number };
};
export type UsageOverride = Partial<Pick<Usage, "prompt_tokens" | "completion_tokens">>;

/** Validates a chat-completions body as OpenAI does for the fields the mock reads; a string is the error. */
export function parseChatRequest(body: unknown): ChatRequest | string {
  if (!body || typeof body !== "object" || Array.isArray(body)) return "The body must be a JSON object.";
  const b = body as Record<string, unknown>;
  if (typeof b.model !== "string" || b.model.length === 0) return "you must provide a model parameter";
  if (!Array.isArray(b.messages) || b.messages.length === 0) return "'messages' must be a non-empty array";
  for (const m of b.messages) {
    if (!m || typeof m !== "object" || typeof (m as { role?: unknown }).role !== "string") return "each message needs a 'role'";
  }
  const max = b.max_completion_tokens ?? b.max_tokens;
  if (max !== undefined && max !== null && (typeof max !== "number" || !Number.isInteger(max) || max < 1)) return "'max_tokens' must be a positive integer";
  const n = b.n ?? 1;
  if (typeof n !== "number" || !Number.isInteger(n) || n < 1 || n > 128) return "'n' must be an integer from 1 to 128";
  if (b.tools !== undefined && !Array.isArray(b.tools)) return "'tools' must be an array";
  const options = b.stream_options as { include_usage?: unknown } | undefined;
  const stop = typeof b.stop === "string" ? [b.stop] : Array.isArray(b.stop) ? b.stop : [];
  if (stop.length > 4 || !stop.every((s) => typeof s === "string")) return "'stop' must be a string or at most 4 strings";
  return {
    model: b.model,
    messages: b.messages as ChatMessage[],
    maxTokens: typeof max === "number" ? max : undefined,
    stream: b.stream === true,
    includeUsage: b.stream === true && options?.include_usage === true,
    tools: (b.tools as ToolDefinition[] | undefined) ?? [],
    toolChoice: b.tool_choice,
    responseFormat: b.response_format as ChatRequest["responseFormat"],
    n,
    logprobs: b.logprobs === true,
    stop: stop as string[],
  };
}

/**
 * A reply cut before the first stop sequence it contains, as OpenAI does (the
 * sequence itself is not returned), and which one it was: vLLM reports it as the
 * choice's `stop_reason`, which the mock does too (OpenAI says only "stop").
 */
function cutAtStop(reply: string, stop: string[]): { text: string; matched: string | null } {
  let at = -1;
  let matched: string | null = null;
  for (const s of stop) {
    const i = s === "" ? -1 : reply.indexOf(s);
    if (i !== -1 && (at === -1 || i < at)) {
      at = i;
      matched = s;
    }
  }
  return at === -1 ? { text: reply, matched: null } : { text: reply.slice(0, at), matched };
}

export type Choice = {
  content: string | null;
  toolCalls: ToolCall[] | null;
  refusal: string | null;
  finishReason: "stop" | "length" | "tool_calls";
  /** The stop sequence that ended the reply (vLLM's `stop_reason`); absent otherwise. */
  stopSequence?: string;
};
export type Completion = { id: string; created: number; model: string; choices: Choice[]; logprobs: boolean; usage: Usage };

/** What the test may dictate about the answer (Behaviour's fields). */
export type Dictated = { usage?: UsageOverride | undefined; toolCalls?: CallSpec[] | undefined; refusal?: string | undefined };

/** One choice's answer: tool calls, a refusal, JSON for a response format, or the reply text (see tokens.ts and tools.ts). */
function choiceFor(req: ChatRequest, id: string, index: number, dictated: Dictated): { choice: Choice; tokens: number } {
  if (dictated.refusal !== undefined)
    return { choice: { content: null, toolCalls: null, refusal: dictated.refusal, finishReason: "stop" }, tokens: countTokens(dictated.refusal) };
  const answered = toolResultsOf(req.messages) !== null;
  const calls = toolCallsFor({ tools: req.tools, toolChoice: req.toolChoice, answered }, `${id.replace(/^chatcmpl-/, "")}_${index}`, dictated.toolCalls);
  if (calls) {
    const tokens = calls.reduce((sum, c) => sum + countTokens(c.function.name + c.function.arguments), 0);
    return { choice: { content: null, toolCalls: calls, refusal: null, finishReason: "tool_calls" }, tokens: Math.min(tokens, req.maxTokens ?? tokens) };
  }
  const format = req.responseFormat;
  const reply =
    format?.type === "json_schema"
      ? JSON.stringify(exampleOf(format.json_schema?.schema))
      : format?.type === "json_object"
        ? JSON.stringify({ reply: replyFor(req.messages) })
        : replyFor(req.messages);
  const stopped = cutAtStop(reply, req.stop);
  const { text, truncated } = truncateToTokens(stopped.text, req.maxTokens);
  const stopSequence = !truncated && stopped.matched !== null ? { stopSequence: stopped.matched } : {};
  return {
    choice: { content: text, toolCalls: null, refusal: null, finishReason: truncated ? "length" : "stop", ...stopSequence },
    tokens: countTokens(text),
  };
}

/** The deterministic answer to a request: `n` choices, usage summed over them (see tokens.ts for the rules). */
export function complete(req: ChatRequest, id: string, dictated: Dictated = {}): Completion {
  const answers = Array.from({ length: req.n }, (_, i) => choiceFor(req, id, i, dictated));
  const prompt = dictated.usage?.prompt_tokens ?? promptTokens(req.messages, { tools: req.tools, response_format: req.responseFormat });
  const completion = dictated.usage?.completion_tokens ?? answers.reduce((sum, a) => sum + a.tokens, 0);
  return {
    id,
    created: Math.floor(Date.now() / 1000),
    model: req.model,
    choices: answers.map((a) => a.choice),
    logprobs: req.logprobs,
    usage: {
      prompt_tokens: prompt,
      completion_tokens: completion,
      total_tokens: prompt + completion,
      prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
    },
  };
}

/** OpenAI's `logprobs` of a text: one entry per streamed piece. */
function logprobsOf(text: string | null) {
  const pieces = text ? streamPieces(text) : [];
  return { content: pieces.map((token) => ({ token, logprob: -0.01, bytes: [...Buffer.from(token)], top_logprobs: [] })), refusal: null };
}

export function completionBody(c: Completion) {
  return {
    id: c.id,
    object: "chat.completion",
    created: c.created,
    model: c.model,
    choices: c.choices.map((choice, index) => ({
      index,
      message: {
        role: "assistant",
        content: choice.content,
        refusal: choice.refusal,
        ...(choice.toolCalls ? { tool_calls: choice.toolCalls } : {}),
        annotations: [],
      },
      logprobs: c.logprobs ? logprobsOf(choice.content) : null,
      finish_reason: choice.finishReason,
      ...(choice.stopSequence !== undefined ? { stop_reason: choice.stopSequence } : {}),
    })),
    usage: c.usage,
  };
}

export type StreamOptions = {
  includeUsage: boolean;
  /** Destroy the connection after the first content chunk. */
  dropMidStream: boolean;
  /** Wait this long before each content chunk (a slow model). */
  chunkDelayMs?: number;
  /** Told when the client went away before the stream ended. */
  onClientGone?: () => void;
};

/** A tool call's deltas as OpenAI streams them: id, type and name first, then the arguments in pieces. */
function toolCallDeltas(calls: ToolCall[]): unknown[] {
  return calls.flatMap((call, index) => [
    { tool_calls: [{ index, id: call.id, type: "function", function: { name: call.function.name, arguments: "" } }] },
    ...(call.function.arguments.match(/[\s\S]{1,8}/gu) ?? []).map((piece) => ({ tool_calls: [{ index, function: { arguments: piece } }] })),
  ]);
}

/**
 * Writes the completion as OpenAI's server-sent events, choice by choice: a
 * role chunk, then one chunk per word (or the tool-call deltas, or the
 * refusal), a chunk with the finish reason; then the usage chunk (`choices:
 * []`) when asked for, then `data: [DONE]`.
 */
export async function writeStream(res: ServerResponse, c: Completion, options: StreamOptions): Promise<void> {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
  const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) =>
    `data: ${JSON.stringify({ id: c.id, object: "chat.completion.chunk", created: c.created, model: c.model, choices, ...extra })}\n\n`;
  // Resolves once the chunk is handed to the socket, so a chunk precedes any drop.
  const write = (text: string) => new Promise<void>((resolve) => res.write(text, () => resolve()));

  let gone = false;
  res.once("close", () => {
    if (!res.writableFinished) {
      gone = true;
      options.onClientGone?.();
    }
  });
  for (const [index, choice] of c.choices.entries()) {
    await write(chunk([{ index, delta: { role: "assistant", content: "" }, logprobs: null, finish_reason: null }]));
    const deltas = choice.toolCalls
      ? toolCallDeltas(choice.toolCalls)
      : choice.refusal !== null
        ? [{ refusal: choice.refusal }]
        : streamPieces(choice.content ?? "").map((piece) => ({ content: piece }));
    for (const delta of deltas) {
      if (options.chunkDelayMs) await new Promise((r) => setTimeout(r, options.chunkDelayMs));
      if (gone) return;
      const piece = (delta as { content?: string }).content;
      const logprobs = c.logprobs && piece !== undefined ? logprobsOf(piece) : null;
      await write(chunk([{ index, delta, logprobs, finish_reason: null }]));
      if (options.dropMidStream) {
        res.socket?.destroy();
        return;
      }
    }
    const stopReason = choice.stopSequence !== undefined ? { stop_reason: choice.stopSequence } : {};
    await write(chunk([{ index, delta: {}, logprobs: null, finish_reason: choice.finishReason, ...stopReason }]));
  }
  if (options.includeUsage) await write(chunk([], { usage: c.usage }));
  res.end("data: [DONE]\n\n");
}
