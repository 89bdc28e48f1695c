import { z } from "zod";
import { usdAmount } from "@gateway/contract";
import { ID_PATTERN } from "@gateway/contract/ids";

/**
 * The chat request on managed models (CONTRACT.md 6b): OpenAI's Chat Completions
 * request as OpenAI documents it, field by field. Objects are strict, so a
 * message, part or tool field that is not on the list is refused by name too
 * (`messages.1.audio`): nothing that could change what the provider bills passes
 * unchecked. Tool parameters and response schemas are JSON Schema, passed as sent.
 */

/** Every top-level field a managed chat request may carry; any other → 400 naming it. */
export const ACCEPTED_FIELDS = new Set([
  "messages",
  "model",
  "tools",
  "tool_choice",
  "parallel_tool_calls",
  "response_format",
  "n",
  "stop",
  "seed",
  "temperature",
  "top_p",
  "presence_penalty",
  "frequency_penalty",
  "logit_bias",
  "logprobs",
  "top_logprobs",
  "user",
  "max_tokens",
  "max_completion_tokens",
  "reasoning_effort",
  "stream",
  "stream_options",
  // The gateway's own (CONTRACT.md 6): checked here, never forwarded.
  "max_cost",
]);

/** Fields the gateway sets or consumes itself; the rest of the accepted ones go to the provider unchanged. */
export const GATEWAY_FIELDS = new Set(["messages", "model", "max_tokens", "max_completion_tokens", "max_cost", "stream", "stream_options"]);

const ImageUrl = z
  .string()
  .refine((url) => url.startsWith("data:") || (url.startsWith("https://") && URL.canParse(url)), "must be a data: URL or an https URL");

const TextPart = z.strictObject({ type: z.literal("text"), text: z.string() });
const ImagePart = z.strictObject({
  type: z.literal("image_url"),
  image_url: z.strictObject({ url: ImageUrl, detail: z.enum(["auto", "low", "high"]).optional() }),
});
const RefusalPart = z.strictObject({ type: z.literal("refusal"), refusal: z.string() });

const textContent = z.union([z.string(), z.array(TextPart).min(1)]);
const Name = z.string().max(128).optional();

const ToolCall = z.strictObject({
  id: z.string(),
  type: z.literal("function"),
  function: z.strictObject({ name: z.string(), arguments: z.string() }),
});

const Message = z.discriminatedUnion("role", [
  z.strictObject({ role: z.literal("system"), content: textContent, name: Name }),
  z.strictObject({ role: z.literal("developer"), content: textContent, name: Name }),
  z.strictObject({
    role: z.literal("user"),
    content: z.union([z.string(), z.array(z.discriminatedUnion("type", [TextPart, ImagePart])).min(1)]),
    name: Name,
  }),
  z
    .strictObject({
      role: z.literal("assistant"),
      content: z
        .union([z.string(), z.array(z.discriminatedUnion("type", [TextPart, RefusalPart])).min(1)])
        .nullable()
        .optional(),
      refusal: z.string().nullable().optional(),
      name: Name,
      tool_calls: z.array(ToolCall).optional(),
      // What OpenAI answers in a message, so a client can send the message back as it got it:
      // annotations (citations, counted in the bound), and empty audio and function_call.
      annotations: z.array(z.unknown()).optional(),
      audio: z.null().optional(),
      function_call: z.null().optional(),
    })
    .refine((m) => (m.content !== undefined && m.content !== null) || (m.tool_calls?.length ?? 0) > 0, {
      message: "an assistant message needs content or tool_calls",
      path: ["content"],
    }),
  z.strictObject({ role: z.literal("tool"), content: textContent, tool_call_id: z.string() }),
]);

/** OpenAI's rule for function names. */
const FunctionName = z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/, "must be 1-64 of a-z A-Z 0-9 _ -");
const JsonSchema = z.record(z.string(), z.unknown());

const Tool = z.strictObject({
  type: z.literal("function"),
  function: z.strictObject({
    name: FunctionName,
    description: z.string().optional(),
    parameters: JsonSchema.optional(),
    strict: z.boolean().nullable().optional(),
  }),
});

const ToolChoice = z.union([
  z.enum(["none", "auto", "required"]),
  z.strictObject({ type: z.literal("function"), function: z.strictObject({ name: FunctionName }) }),
]);

const ResponseFormat = z.discriminatedUnion("type", [
  z.strictObject({ type: z.literal("text") }),
  z.strictObject({ type: z.literal("json_object") }),
  z.strictObject({
    type: z.literal("json_schema"),
    json_schema: z.strictObject({
      name: FunctionName,
      description: z.string().optional(),
      schema: JsonSchema.optional(),
      strict: z.boolean().nullable().optional(),
    }),
  }),
]);

const maybe = <T extends z.ZodType>(schema: T) => schema.nullable().optional();
const between = (min: number, max: number) => maybe(z.number().min(min).max(max));

export const ChatBody = z.object({
  messages: z.array(Message).min(1, "messages must be a non-empty array"),
  model: z.string().regex(ID_PATTERN, "model must be a model alias").optional(),
  tools: z.array(Tool).optional(),
  tool_choice: ToolChoice.optional(),
  parallel_tool_calls: z.boolean().optional(),
  response_format: ResponseFormat.optional(),
  n: maybe(z.number().int().min(1).max(8, "n is at most 8 on managed models")),
  stop: maybe(z.union([z.string(), z.array(z.string()).max(4)])),
  seed: maybe(z.number().int()),
  temperature: between(0, 2),
  top_p: between(0, 1),
  presence_penalty: between(-2, 2),
  frequency_penalty: between(-2, 2),
  logit_bias: maybe(z.record(z.string().regex(/^\d+$/, "keys are token ids"), z.number().min(-100).max(100))),
  logprobs: maybe(z.boolean()),
  top_logprobs: maybe(z.number().int().min(0).max(20)),
  user: z.string().optional(),
  max_tokens: maybe(z.number().int().min(1)),
  max_completion_tokens: maybe(z.number().int().min(1)),
  reasoning_effort: maybe(z.enum(["none", "minimal", "low", "medium", "high", "xhigh"])),
  stream: maybe(z.boolean()),
  stream_options: maybe(z.strictObject({ include_usage: z.boolean().optional(), include_obfuscation: z.boolean().optional() })),
  max_cost: usdAmount().optional(),
});
export type ChatBody = z.infer<typeof ChatBody>;
