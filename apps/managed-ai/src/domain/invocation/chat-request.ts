import type { z } from "zod";
import { AppError } from "@gateway/errors";
import { ACCEPTED_FIELDS, ChatBody, GATEWAY_FIELDS } from "./chat-schema.js";
import { chatInputBound, type ChatMessage, type ChatTool } from "./tokens.js";

export type ChatRequest = {
  /** As forwarded to the provider: the client's, unchanged (validated first on managed instances). */
  messages: unknown[];
  model: string | undefined;
  maxTokens: number | undefined;
  /** The name the provider gets the output cap under: the client's choice (default max_tokens). */
  maxTokensParam?: "max_tokens" | "max_completion_tokens";
  /** Choices asked for (`n`); the output part of the reservation is the cap times this. */
  choices?: number;
  maxCostUsd: number | undefined;
  stream: boolean;
  /** The client asked for the usage chunk in its stream. */
  includeUsage: boolean;
  /** The client's other stream options, forwarded with `include_usage: true`. */
  streamOptions?: Record<string, unknown>;
  /** Provider parameters to forward unchanged. */
  passthrough: Record<string, unknown>;
  /** The input bound of everything but image parts. */
  inputTokens: bigint;
  /** Image parts: each adds the model's max_tokens_per_image (managed; byok counts them in `inputTokens`). */
  imageParts: number;
};

function describe(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return "invalid request body";
  const path = issue.path.map(String).join(".");
  return path ? `${path}: ${issue.message}` : issue.message;
}

const invalid = (message: string, param?: string) => new AppError("invalid_request", message, { extra: param ? { param } : {} });

/** What the gateway sets itself of a chat body, read alike on managed and bring-your-own-key requests. */
type GatewaySet = {
  model?: string | undefined;
  max_tokens?: number | null | undefined;
  max_completion_tokens?: number | null | undefined;
  max_cost?: number | undefined;
  stream?: boolean | null | undefined;
  stream_options?: ({ include_usage?: boolean | undefined } & Record<string, unknown>) | null | undefined;
  n?: number | null | undefined;
};

/** `raw` parsed by `schema`, or a 400 naming the first field at fault; the output cap's two names must agree. */
export function parsedBody<T extends GatewaySet>(schema: z.ZodType<T>, raw: unknown): T {
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const param = parsed.error.issues[0]?.path[0];
    throw invalid(describe(parsed.error), typeof param === "string" ? param : undefined);
  }
  const body = parsed.data;
  if (body.max_tokens != null && body.max_completion_tokens != null && body.max_tokens !== body.max_completion_tokens) {
    throw invalid("max_tokens and max_completion_tokens disagree; send one", "max_completion_tokens");
  }
  return body;
}

/** The request's settings the gateway reads from what it sets itself (the model, the output cap and its name, choices, stream, `max_cost`). */
export function gatewaySettings(body: GatewaySet): Omit<ChatRequest, "messages" | "passthrough" | "inputTokens" | "imageParts"> {
  const { include_usage, ...streamOptions } = body.stream_options ?? {};
  return {
    model: body.model,
    maxTokens: body.max_tokens ?? body.max_completion_tokens ?? undefined,
    ...(body.max_completion_tokens != null && body.max_tokens == null ? { maxTokensParam: "max_completion_tokens" as const } : {}),
    ...(body.n != null ? { choices: body.n } : {}),
    maxCostUsd: body.max_cost,
    stream: body.stream ?? false,
    includeUsage: include_usage === true,
    ...(Object.keys(streamOptions).length > 0 ? { streamOptions } : {}),
  };
}

/**
 * The body of a chat completion on a managed model (CONTRACT.md 6b): a field not
 * on the list → 400 naming it; the accepted ones are validated, priced (the input
 * bound, see tokens.ts) and passed to the provider unchanged, except what the
 * gateway sets itself (the model, the output cap, stream options, `max_cost`).
 */
export function parseChatRequest(raw: unknown): ChatRequest {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) throw invalid("The body must be a JSON object.");
  const record = raw as Record<string, unknown>;
  const passthrough: Record<string, unknown> = {};
  for (const name in record) {
    if (!ACCEPTED_FIELDS.has(name)) throw invalid(`${name} is not accepted on managed models (CONTRACT.md 6b lists the chat request's fields)`, name);
    if (!GATEWAY_FIELDS.has(name) && record[name] !== undefined) passthrough[name] = record[name];
  }
  const body = parsedBody(ChatBody, raw);
  const messages = record.messages as ChatMessage[];
  let bound: ReturnType<typeof chatInputBound>;
  try {
    bound = chatInputBound({ messages, tools: record.tools as ChatTool[] | undefined, tool_choice: body.tool_choice, response_format: body.response_format });
  } catch (err) {
    // JSON.stringify of a body nested deeper than the stack allows.
    if (err instanceof RangeError) throw invalid("The request is nested too deeply.");
    throw err;
  }
  return {
    messages,
    ...gatewaySettings(body),
    passthrough,
    inputTokens: bound.tokens,
    imageParts: bound.imageParts,
  };
}
