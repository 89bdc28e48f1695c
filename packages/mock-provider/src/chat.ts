import type { ServerResponse } from "node:http";
import { countTokens, promptTokens, replyFor, streamPieces, truncateToTokens, type ChatMessage } from "./tokens.js";

export type ChatRequest = {
  model: string;
  messages: ChatMessage[];
  maxTokens: number | undefined;
  stream: boolean;
  includeUsage: boolean;
};

export type Usage = { prompt_tokens: number; completion_tokens: number; total_tokens: number };

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
  const options = b.stream_options as { include_usage?: unknown } | undefined;
  return {
    model: b.model,
    messages: b.messages as ChatMessage[],
    maxTokens: typeof max === "number" ? max : undefined,
    stream: b.stream === true,
    includeUsage: b.stream === true && options?.include_usage === true,
  };
}

export type Completion = { id: string; created: number; model: string; content: string; finishReason: "stop" | "length"; usage: Usage };

/** The deterministic answer to a request (see tokens.ts for the rules). */
export function complete(req: ChatRequest, id: string, usageOverride?: Partial<Omit<Usage, "total_tokens">>): Completion {
  const { text, truncated } = truncateToTokens(replyFor(req.messages), req.maxTokens);
  const prompt = usageOverride?.prompt_tokens ?? promptTokens(req.messages);
  const completion = usageOverride?.completion_tokens ?? countTokens(text);
  return {
    id,
    created: Math.floor(Date.now() / 1000),
    model: req.model,
    content: text,
    finishReason: truncated ? "length" : "stop",
    usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion },
  };
}

export function completionBody(c: Completion) {
  return {
    id: c.id,
    object: "chat.completion",
    created: c.created,
    model: c.model,
    choices: [{ index: 0, message: { role: "assistant", content: c.content }, logprobs: null, finish_reason: c.finishReason }],
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

/**
 * Writes the completion as OpenAI's server-sent events: a role chunk, one chunk
 * per word, a chunk with the finish reason, the usage chunk (`choices: []`) when
 * asked for, then `data: [DONE]`.
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
  await write(chunk([{ index: 0, delta: { role: "assistant", content: "" }, logprobs: null, finish_reason: null }]));
  for (const piece of streamPieces(c.content)) {
    if (options.chunkDelayMs) await new Promise((r) => setTimeout(r, options.chunkDelayMs));
    if (gone) return;
    await write(chunk([{ index: 0, delta: { content: piece }, logprobs: null, finish_reason: null }]));
    if (options.dropMidStream) {
      res.socket?.destroy();
      return;
    }
  }
  await write(chunk([{ index: 0, delta: {}, logprobs: null, finish_reason: c.finishReason }]));
  if (options.includeUsage) await write(chunk([], { usage: c.usage }));
  res.end("data: [DONE]\n\n");
}
