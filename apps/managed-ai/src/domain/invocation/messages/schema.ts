import { z } from "zod";

/**
 * Anthropic's Messages request as CONTRACT.md 6c accepts it, field by field.
 * Objects are strict, so a block or tool field that is not on the list is
 * refused by path (`messages.1.content.0.citations`), as the chat request's are
 * (decision 0206): whatever reaches the provider was read and bounded here.
 * `cache_control` (on any block and on tools), `thinking`, `metadata` and `top_k`
 * are accepted and not forwarded (decision 0207).
 */

/** Every top-level field of a Messages request; any other → 400 naming it. */
export const ACCEPTED_FIELDS = new Set([
  "model",
  "max_tokens",
  "system",
  "messages",
  "tools",
  "tool_choice",
  "stop_sequences",
  "temperature",
  "top_p",
  "top_k",
  "stream",
  "metadata",
  "thinking",
]);

/** The chat API allows at most this many stop sequences (CONTRACT.md 6b). */
export const MAX_STOP_SEQUENCES = 4;

/** Accepted on any block and tool, never forwarded: prompt caching is the provider's own business. */
const CacheControl = z.object({ type: z.string() }).loose().nullable().optional();

const TextBlock = z.strictObject({ type: z.literal("text"), text: z.string(), cache_control: CacheControl });
const ImageSource = z.discriminatedUnion("type", [
  z.strictObject({
    type: z.literal("base64"),
    media_type: z.enum(["image/jpeg", "image/png", "image/gif", "image/webp"]),
    data: z.string().regex(/^[A-Za-z0-9+/=\s]*$/, "must be base64"),
  }),
  z.strictObject({
    type: z.literal("url"),
    url: z.string().refine((url) => url.startsWith("https://") && URL.canParse(url), "must be an https URL"),
  }),
]);
const ImageBlock = z.strictObject({ type: z.literal("image"), source: ImageSource, cache_control: CacheControl });
const ToolUseBlock = z.strictObject({
  type: z.literal("tool_use"),
  id: z.string().min(1),
  name: z.string().min(1),
  input: z.record(z.string(), z.unknown()),
  cache_control: CacheControl,
});
const ToolResultBlock = z.strictObject({
  type: z.literal("tool_result"),
  tool_use_id: z.string().min(1),
  content: z.union([z.string(), z.array(z.discriminatedUnion("type", [TextBlock, ImageBlock]))]).optional(),
  is_error: z.boolean().optional(),
  cache_control: CacheControl,
});

export type TextBlock = z.infer<typeof TextBlock>;
export type ImageBlock = z.infer<typeof ImageBlock>;
export type ToolUseBlock = z.infer<typeof ToolUseBlock>;
export type ToolResultBlock = z.infer<typeof ToolResultBlock>;

const texts = z.union([z.string(), z.array(TextBlock)]);

const Message = z.discriminatedUnion("role", [
  z.strictObject({
    role: z.literal("user"),
    content: z.union([z.string(), z.array(z.discriminatedUnion("type", [TextBlock, ImageBlock, ToolResultBlock])).min(1)]),
  }),
  z.strictObject({
    role: z.literal("assistant"),
    content: z.union([z.string(), z.array(z.discriminatedUnion("type", [TextBlock, ToolUseBlock]))]),
  }),
  // A system turn in the middle of the conversation (Claude Code sends one): a system message there too.
  z.strictObject({ role: z.literal("system"), content: texts }),
]);
export type Message = z.infer<typeof Message>;

/** The chat API's rule for function names (CONTRACT.md 6b), so every tool translates. */
const ToolName = z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/, "must be 1-64 of a-z A-Z 0-9 _ -");

const Tool = z.strictObject({
  type: z.literal("custom").optional(),
  name: ToolName,
  description: z.string().optional(),
  input_schema: z.object({ type: z.literal("object") }).loose(),
  cache_control: CacheControl,
});
export type Tool = z.infer<typeof Tool>;

const parallel = { disable_parallel_tool_use: z.boolean().optional() };
const ToolChoice = z.discriminatedUnion("type", [
  z.strictObject({ type: z.literal("auto"), ...parallel }),
  z.strictObject({ type: z.literal("any"), ...parallel }),
  z.strictObject({ type: z.literal("tool"), name: ToolName, ...parallel }),
  z.strictObject({ type: z.literal("none") }),
]);
export type ToolChoice = z.infer<typeof ToolChoice>;

const fields = {
  model: z.string().min(1, "model is required: the model alias"),
  system: texts.optional(),
  messages: z.array(Message).min(1, "messages must be a non-empty array"),
  tools: z.array(Tool).optional(),
  tool_choice: ToolChoice.optional(),
  stop_sequences: z.array(z.string()).max(MAX_STOP_SEQUENCES, `at most ${MAX_STOP_SEQUENCES} stop sequences (the chat API's limit)`).optional(),
  temperature: z.number().min(0).max(1).optional(),
  top_p: z.number().min(0).max(1).optional(),
  top_k: z.number().int().min(0).optional(),
  stream: z.boolean().optional(),
  metadata: z.strictObject({ user_id: z.string().max(256).nullable().optional() }).optional(),
  // Extended thinking's settings (enabled with a budget, adaptive, disabled): reasoning stays within max_tokens.
  thinking: z.object({ type: z.string() }).loose().optional(),
};

export const MessagesBody = z.object({ ...fields, max_tokens: z.number().int().min(1) });
export type MessagesBody = z.infer<typeof MessagesBody>;

/** count_tokens: the same body without `max_tokens` (sent, it is ignored). */
export const CountTokensBody = z.object({ ...fields, max_tokens: z.number().int().min(1).optional() });
export type CountTokensBody = z.infer<typeof CountTokensBody>;
