import { z } from "zod";
import { usdAmount } from "@gateway/contract-schemas";
import { AppError } from "@gateway/errors";
import type { BoundableMessage } from "./tokens.js";
import { ID_PATTERN } from "@gateway/ids";

/**
 * The body of a managed chat completion (spec 2.5, OpenAI's shape). Parameters
 * fall in three groups:
 *  - passed to the provider unchanged (ALLOWED);
 *  - refused with 400 naming the parameter, because a managed model cannot price
 *    or honour them safely (REFUSED): more than one choice multiplies output
 *    beyond the reservation; tools, images, audio and structured-output schemas
 *    add input the gateway cannot bound; logit bias and service tiers change
 *    behaviour or price per provider;
 *  - anything else is ignored (not forwarded), as the contract allows.
 */
export const ALLOWED_PARAMETERS = [
  "temperature",
  "top_p",
  "stop",
  "presence_penalty",
  "frequency_penalty",
  "seed",
  "user",
  "logprobs",
  "top_logprobs",
] as const;

export const REFUSED_PARAMETERS: Record<string, string> = {
  logit_bias: "logit_bias is not supported on managed models",
  tools: "tools are not supported on managed models",
  tool_choice: "tool_choice is not supported on managed models",
  functions: "functions are not supported on managed models",
  function_call: "function_call is not supported on managed models",
  parallel_tool_calls: "parallel_tool_calls is not supported on managed models",
  audio: "audio is not supported on managed models",
  modalities: "modalities is not supported on managed models",
  prediction: "prediction is not supported on managed models",
  service_tier: "service_tier is not supported on managed models",
};

const TextPart = z.object({ type: z.literal("text"), text: z.string() });
const Content = z.union([z.string(), z.array(TextPart).min(1)]);
const Message = z.object({
  role: z.enum(["system", "developer", "user", "assistant"]),
  content: Content,
  name: z.string().max(128).optional(),
});

const Body = z.object({
  messages: z.array(Message).min(1, "messages must be a non-empty array"),
  model: z.string().regex(ID_PATTERN, "model must be a model alias").optional(),
  max_tokens: z.number().int().min(1).optional(),
  max_completion_tokens: z.number().int().min(1).optional(),
  max_cost: usdAmount().optional(),
  stream: z.boolean().optional(),
  stream_options: z.object({ include_usage: z.boolean().optional() }).optional(),
  n: z.number().int().min(1).max(1, "n above 1 is not supported on managed models").optional(),
  response_format: z.object({ type: z.enum(["text", "json_object"], "response_format json_schema is not supported on managed models") }).optional(),
});

export type ChatRequest = {
  /** As forwarded to the provider (managed: validated text messages; byok: the client's, unchanged). */
  messages: unknown[];
  model: string | undefined;
  maxTokens: number | undefined;
  /** The name the provider gets the output cap under (byok keeps the client's choice; default max_tokens). */
  maxTokensParam?: "max_tokens" | "max_completion_tokens";
  /** Choices asked for (byok; managed models refuse n above 1). */
  choices?: number;
  maxCostUsd: number | undefined;
  stream: boolean;
  /** The client asked for the usage chunk in its stream. */
  includeUsage: boolean;
  /** Provider parameters to forward unchanged. */
  passthrough: Record<string, unknown>;
  /** The messages as text, for the token bound. */
  boundable: BoundableMessage[];
};

function describe(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return "invalid request body";
  const path = issue.path.map(String).join(".");
  return path ? `${path}: ${issue.message}` : issue.message;
}

export function parseChatRequest(raw: unknown): ChatRequest {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) throw new AppError("invalid_request", "The body must be a JSON object.");
  const record = raw as Record<string, unknown>;
  for (const [name, message] of Object.entries(REFUSED_PARAMETERS)) {
    if (record[name] !== undefined && record[name] !== null) throw new AppError("invalid_request", message, { extra: { param: name } });
  }
  const parsed = Body.safeParse(raw);
  if (!parsed.success) {
    const param = parsed.error.issues[0]?.path[0];
    throw new AppError("invalid_request", describe(parsed.error), { extra: typeof param === "string" ? { param } : {} });
  }
  const body = parsed.data;
  if (body.max_tokens !== undefined && body.max_completion_tokens !== undefined && body.max_tokens !== body.max_completion_tokens) {
    throw new AppError("invalid_request", "max_tokens and max_completion_tokens disagree; send one", { extra: { param: "max_completion_tokens" } });
  }
  const passthrough: Record<string, unknown> = {};
  for (const name of ALLOWED_PARAMETERS) if (record[name] !== undefined) passthrough[name] = record[name];
  if (body.response_format) passthrough.response_format = body.response_format;
  return {
    messages: body.messages.map((m) => ({ role: m.role, content: m.content, ...(m.name ? { name: m.name } : {}) })),
    model: body.model,
    maxTokens: body.max_tokens ?? body.max_completion_tokens,
    maxCostUsd: body.max_cost,
    stream: body.stream ?? false,
    includeUsage: body.stream_options?.include_usage === true,
    passthrough,
    boundable: body.messages.map((m) => ({
      role: m.role,
      name: m.name,
      text: typeof m.content === "string" ? m.content : m.content.map((p) => p.text).join(""),
    })),
  };
}
