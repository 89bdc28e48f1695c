import { z } from "zod";
import { idempotencyKeyHeader } from "@gateway/contract";
import { HTTP_STATUS, isErrorCode } from "@gateway/errors";
import type { ErrorShape } from "../../../http/route.js";

/*
 * Anthropic's Messages API on every ai-model instance (CONTRACT.md 6c). The body is
 * documented here and validated in managed-ai, which owns its one schema and its
 * translation to the chat request (decision 0207), as the compatible chat route's is.
 */

const ANTHROPIC_HEADERS = {
  "anthropic-version": z.string().optional().describe("Accepted and ignored (Anthropic's SDKs send it)."),
  "anthropic-beta": z.string().optional().describe("Accepted and ignored (Anthropic's SDKs and Claude Code send beta names)."),
};

export const MessagesHeaders = idempotencyKeyHeader(
  "1-128 of A-Z a-z 0-9 . _ : -; a reuse within 24 h by the same key gets 409 and nothing is replayed (managed).",
).extend(ANTHROPIC_HEADERS);
export type MessagesHeaders = z.infer<typeof MessagesHeaders>;

export const CountTokensHeaders = z.object(ANTHROPIC_HEADERS);
export type CountTokensHeaders = z.infer<typeof CountTokensHeaders>;

const block = z.object({ type: z.string() }).loose();

export const MessagesRequest = z
  .object({
    model: z.string().describe("The model alias (as on the chat route)."),
    max_tokens: z.number().int().min(1).describe("The output cap; above the instance's max_tokens_per_request or the model's max_output_tokens: 400."),
    system: z.union([z.string(), z.array(block)]).optional(),
    messages: z
      .array(z.object({ role: z.enum(["user", "assistant", "system"]), content: z.union([z.string(), z.array(block)]) }))
      .min(1)
      .describe(
        "Content blocks text, image (base64 or url source), tool_use (assistant) and tool_result (user); a system turn among them is a system message.",
      ),
    tools: z.array(z.object({ name: z.string(), description: z.string().optional(), input_schema: z.record(z.string(), z.unknown()) }).loose()).optional(),
    tool_choice: z
      .object({ type: z.enum(["auto", "any", "tool", "none"]) })
      .loose()
      .optional(),
    stop_sequences: z.array(z.string()).max(4).optional(),
    temperature: z.number().optional(),
    top_p: z.number().optional(),
    top_k: z.number().int().optional().describe("Accepted and not forwarded (the chat API has none)."),
    stream: z.boolean().optional(),
    metadata: z.object({ user_id: z.string().nullable().optional() }).optional().describe("Accepted and not forwarded."),
    thinking: z.object({ type: z.string() }).loose().optional().describe("Accepted and not forwarded: reasoning stays within max_tokens."),
  })
  .describe(
    "Anthropic's Messages request (CONTRACT.md 6c), translated to the chat request of CONTRACT.md 6b and metered as it is. cache_control on any block is accepted and not forwarded; any other top-level field gets 400 naming it.",
  );

export const CountTokensRequest = MessagesRequest.extend({ max_tokens: z.number().int().min(1).optional().describe("Ignored.") });

export const MessageResponse = z.object({
  id: z.string().describe("msg_ and the request's X-Request-ID without its req_ prefix."),
  type: z.literal("message"),
  role: z.literal("assistant"),
  model: z.string(),
  content: z.array(
    z.union([
      z.object({ type: z.literal("text"), text: z.string() }),
      z.object({ type: z.literal("tool_use"), id: z.string(), name: z.string(), input: z.record(z.string(), z.unknown()) }),
    ]),
  ),
  stop_reason: z.enum(["end_turn", "max_tokens", "stop_sequence", "tool_use"]),
  stop_sequence: z.string().nullable(),
  usage: z
    .object({ input_tokens: z.number().int(), output_tokens: z.number().int() })
    .describe("The provider's reported usage: what the charge is computed from."),
});

export const CountTokensResponse = z.object({
  input_tokens: z.number().int().describe("The gateway's upper bound of the input tokens (CONTRACT.md 6b), what a call's reservation counts; not metered."),
});

/** CONTRACT.md 6c: Anthropic's error type for each of the contract's statuses. */
const ERROR_TYPES: Readonly<Record<number, string>> = {
  400: "invalid_request_error",
  401: "authentication_error",
  402: "billing_error",
  403: "permission_error",
  404: "not_found_error",
  409: "invalid_request_error",
  413: "request_too_large",
  422: "invalid_request_error",
  429: "rate_limit_error",
  500: "api_error",
  502: "overloaded_error",
  503: "overloaded_error",
};

export const anthropicErrorType = (status: number): string => ERROR_TYPES[status] ?? "api_error";

export const AnthropicError = z
  .object({
    type: z.literal("error"),
    error: z.object({ type: z.string().describe("By status (CONTRACT.md 6c): 400 and 409 invalid_request_error, 402 billing_error..."), message: z.string() }),
    request_id: z.string(),
  })
  .catchall(z.unknown())
  .describe("Anthropic's error body; the contract's extras (`pricing`, `budget`, `param`) beside `error`.");

/** The Messages routes' errors: Anthropic's `{type: "error", error: {type, message}}`, the request id and the contract's extras beside it. */
export const anthropicErrors: ErrorShape = {
  name: "AnthropicError",
  schema: AnthropicError,
  body(status, flat) {
    const { error: _code, message, request_id, ...extra } = flat;
    return { ...extra, type: "error", error: { type: anthropicErrorType(status), message }, request_id };
  },
};

/** A failure after a stream started, as Anthropic's `error` event (a provider failure: 502, overloaded_error). */
export function anthropicStreamError(code: string, message: string): string {
  const type = anthropicErrorType(isErrorCode(code) ? HTTP_STATUS[code] : HTTP_STATUS.upstream_error);
  return `event: error\ndata: ${JSON.stringify({ type: "error", error: { type, message } })}\n\n`;
}
