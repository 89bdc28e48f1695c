import { z } from "zod";
import { Id, type IdempotencyKeyHeader, idempotencyKeyHeader, usdAmount } from "@gateway/contract";

export const AliasParams = z.object({ alias: Id });
export type AliasParams = z.infer<typeof AliasParams>;

/** The metered call's Idempotency-Key (managed instances; CONTRACT.md 6). */
export const InvokeHeaders = idempotencyKeyHeader(
  "1-128 of A-Z a-z 0-9 . _ : -; a reuse within 24 h by the same key gets 409 and nothing is replayed (managed).",
);
export type InvokeHeaders = IdempotencyKeyHeader;
/** The same header on the native and embeddings routes. */
export const SameInvokeHeaders = idempotencyKeyHeader("As on the compatible route (managed instances).");

/**
 * The body as documented (spec 2.5, OpenAI's chat shape), for the OpenAPI
 * document and the native routes. On the compatible route the edge does not
 * check it (`validateBody: false`): the one schema is managed-ai's, which knows
 * what managed and byok models accept (managed: the fields of CONTRACT.md 6b,
 * any other top-level field 400 naming it; byok: everything passes through).
 */
export const ChatCompletionRequest = z
  .object({
    messages: z
      .array(z.object({ role: z.string(), content: z.unknown() }).loose())
      .min(1)
      .describe(
        "Roles system, developer, user (text and image_url parts), assistant (tool_calls, refusal; content null with tool_calls) and tool (tool_call_id).",
      ),
    model: z.string().optional().describe("Model alias; default: the instance's default_model."),
    max_tokens: z.number().int().optional(),
    max_cost: usdAmount().optional().describe("USD ceiling: a request whose worst-case cost is above it gets 409."),
    stream: z.boolean().optional(),
  })
  .loose()
  .describe(
    "OpenAI's Chat Completions request. Managed models accept (CONTRACT.md 6b): messages, model, tools, tool_choice, parallel_tool_calls, response_format (text, json_object, json_schema), n (1..8), stop, seed, temperature, top_p, presence_penalty, frequency_penalty, logit_bias, logprobs, top_logprobs, user, max_tokens or max_completion_tokens, reasoning_effort, stream, stream_options and the gateway's max_cost; any other top-level field gets 400 naming it. Image parts need the model's max_tokens_per_image. Bring-your-own-key instances pass every field through.",
  );

export const ChatCompletionResponse = z
  .object({ id: z.string(), object: z.string(), model: z.string(), choices: z.array(z.unknown()), usage: z.unknown() })
  .loose();

export const ModelList = z.object({
  object: z.literal("list"),
  data: z.array(z.object({ id: z.string(), object: z.literal("model"), created: z.number().int(), owned_by: z.string() })),
});

export const COST_HEADERS = {
  "X-Service-Price-Version": "The applied price version's id.",
  "X-Service-Estimated-Cost": "The reservation, USD with four decimals.",
};

/** CONTRACT.md section 7: the native chat answer. */
export const NativeUsage = z.object({ prompt_tokens: z.number().int(), completion_tokens: z.number().int(), total_tokens: z.number().int() });
export const NativeChatResponse = z.object({
  data: z.object({
    id: z.string(),
    model: z.string(),
    content: z.string().nullable(),
    finish_reason: z.string().nullable(),
    usage: NativeUsage.nullable(),
  }),
});

/** The native embeddings body: `input` and optionally `model` (default: the instance's) and `max_cost`. */
export const NativeEmbeddingsRequest = z.object({
  input: z.union([z.string().min(1), z.array(z.string().min(1)).min(1).max(2048)]),
  model: z.string().min(1).max(256).optional(),
  max_cost: usdAmount().optional().describe("USD ceiling: a request whose worst-case cost is above it gets 409."),
});
export type NativeEmbeddingsRequest = z.infer<typeof NativeEmbeddingsRequest>;

export const NativeEmbeddingsResponse = z.object({
  data: z.object({
    model: z.string(),
    embeddings: z.array(z.array(z.number())),
    usage: z.object({ prompt_tokens: z.number().int(), total_tokens: z.number().int() }).nullable(),
  }),
});

/** OpenAI's embeddings body, documented here and validated only in managed-ai; unknown fields pass to byok providers. */
export const EmbeddingsRequest = z
  .object({
    input: z.unknown().describe("A string, strings, a token array or token arrays."),
    model: z.string().optional(),
    max_cost: z.number().optional(),
  })
  .loose();

export const EmbeddingsResponse = z.object({ object: z.literal("list"), data: z.array(z.unknown()), model: z.string(), usage: z.unknown() }).loose();

export const NATIVE_COST_HEADERS = {
  "X-Service-Estimated-Cost": "The worst-case cost (managed: the reservation; byok: at config.pricing), USD with four decimals.",
  "X-Service-Final-Cost": "The cost of the reported usage (managed: the charge), USD with four decimals.",
  "X-Service-Total-Tokens": "Tokens the provider reported.",
};

/** The access of the invocation routes: a key with ai:invoke, for the instance named by `:alias`. */
export const INVOKE_ACCESS = { kind: "apiKey", scope: "ai:invoke", service: { type: "ai-model", aliasParam: "alias" } } as const;
/** The errors the invocation routes answer alike (the contract's flat body). */
export const INVOKE_ERRORS = {
  400: { description: "invalid body, or max_tokens above the instance's or model's limit" },
  402: { description: "insufficient balance; no provider call (managed)" },
  404: { description: "no such instance" },
  409: {
    description:
      "worst case above max_cost or max_cost_per_request (pricing.cost), a spend budget without room for the reservation (budget), or Idempotency-Key reused",
  },
  502: { description: "the provider failed; the reservation was released" },
};
