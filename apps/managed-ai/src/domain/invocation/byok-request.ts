import { z } from "zod";
import { usdAmount } from "@gateway/contract";
import { AppError } from "@gateway/errors";
import { gatewaySettings, parsedBody, type ChatRequest } from "./chat-request.js";
import { inputTokenUpperBound, type BoundableMessage } from "./tokens.js";

/**
 * The body of a chat completion on a bring-your-own-key instance. The customer
 * pays their own provider, so every provider parameter passes through (tools,
 * images, n...) except what the gateway sets itself: `model` (default: the
 * instance's), the output cap (`max_tokens` / `max_completion_tokens`, under
 * the name the client used), `stream` / `stream_options` (usage is always
 * asked for) and the gateway's own `max_cost`.
 */
const Body = z
  .object({
    messages: z.array(z.object({ role: z.string().min(1) }).loose()).min(1, "messages must be a non-empty array"),
    model: z
      .string()
      .regex(/^[\x21-\x7e]{1,256}$/, "model must be 1-256 printable ASCII characters")
      .optional(),
    // null is "not set", as OpenAI reads it (and as managed requests accept it, CONTRACT.md 6b).
    max_tokens: z.number().int().min(1).nullable().optional(),
    max_completion_tokens: z.number().int().min(1).nullable().optional(),
    max_cost: usdAmount().optional(),
    stream: z.boolean().nullable().optional(),
    stream_options: z.object({ include_usage: z.boolean().optional() }).loose().nullable().optional(),
    n: z.number().int().min(1).max(128).nullable().optional(),
  })
  .loose();

const GATEWAY_SET = new Set(["messages", "model", "max_tokens", "max_completion_tokens", "max_cost", "stream", "stream_options"]);
/** Request parameters that become prompt input besides the messages. */
const PROMPT_PARAMETERS = ["tools", "functions", "response_format", "prediction"];

const text = (value: unknown) => (typeof value === "string" ? value : value === undefined || value === null ? "" : JSON.stringify(value));

export function parseByokChatRequest(raw: unknown): ChatRequest {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) throw new AppError("invalid_request", "The body must be a JSON object.");
  const body = parsedBody(Body, raw);
  const passthrough: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(raw as Record<string, unknown>)) if (!GATEWAY_SET.has(name) && value !== undefined) passthrough[name] = value;
  // The estimate bounds text by its UTF-8 bytes (a byte-level BPE token is at least one byte);
  // non-text content (images, audio) is counted by its JSON, which is not a bound (docs/decisions/0142).
  const boundable: BoundableMessage[] = body.messages.map((m) => {
    const { role, name, content, ...rest } = m as { role: string; name?: unknown; content?: unknown };
    return { role, name: typeof name === "string" ? name : undefined, text: text(content) + (Object.keys(rest).length > 0 ? JSON.stringify(rest) : "") };
  });
  const extra = PROMPT_PARAMETERS.filter((p) => passthrough[p] !== undefined)
    .map((p) => JSON.stringify(passthrough[p]))
    .join("");
  if (extra) boundable.push({ role: "", text: extra });
  return {
    messages: body.messages,
    ...gatewaySettings(body),
    passthrough,
    inputTokens: inputTokenUpperBound(boundable),
    imageParts: 0,
  };
}
