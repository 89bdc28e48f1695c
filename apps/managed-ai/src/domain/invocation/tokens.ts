import { schemaBytes } from "./schema-bytes.js";

/**
 * An upper bound on the input tokens a provider counts for a chat request
 * (CONTRACT.md sections 6 and 6b; docs/decisions/0206).
 *
 * Byte-level BPE tokenizers (OpenAI's and every OpenAI-compatible one we know)
 * map each token to at least one byte of the text, so a text never has more
 * tokens than UTF-8 bytes, and a prompt rendered from pieces never has more
 * tokens than the bytes of its pieces plus its special tokens and the fixed text
 * the chat format adds. The constants below bound that framing, generously,
 * after OpenAI's token-counting guide (3 tokens per message, 1 per name, 3 to
 * prime the reply; a function adds 7 + 12 and 3 per property) and the formats
 * its models are known to render (ChatML; the harmony format's
 * `<|start|>assistant to=functions.NAME<|channel|>commentary json<|message|>ARGS<|call|>`
 * and `# Tools … namespace functions { … }`), each counted as bytes:
 *  - a message: 4 + bytes(role) + bytes(name), and its text (string content,
 *    text and refusal parts, `refusal`, an answer's `annotations` sent back) by
 *    bytes, +1 per content part;
 *  - a tool call in an assistant message: 48 + bytes(id, name, arguments);
 *  - a tool result (`tool` message): 40 + bytes(tool_call_id) + the longest
 *    function name it may answer (the rendering names the function; at least 64,
 *    OpenAI's limit);
 *  - tool definitions: 100 once (the tools preamble, which may be a message of its
 *    own), then per tool 16 + twice the bytes of its compact JSON with local
 *    `$ref`s expanded (the renderings seen, TypeScript-like or JSON with spaces,
 *    are at most twice as long: enum unions, comment prefixes, ", " separators);
 *  - `response_format` and an object `tool_choice`: 40 + twice their JSON, likewise;
 *  - 3 to prime the reply.
 * Image parts are not text: each adds the model's `max_tokens_per_image`, which
 * the planner applies (`imageParts`).
 */
export const REPLY_PRIMING_TOKENS = 3;
export const PER_MESSAGE_TOKENS = 4;
export const PER_PART_TOKENS = 1;
export const PER_TOOL_CALL_TOKENS = 48;
export const PER_TOOL_RESULT_TOKENS = 40;
/** OpenAI's limit on a function name (`^[a-zA-Z0-9_-]{1,64}$`). */
export const FUNCTION_NAME_BYTES = 64;
export const TOOLS_PREAMBLE_TOKENS = 100;
export const PER_TOOL_TOKENS = 16;
export const STRUCTURED_TOKENS = 40;
/** Tool definitions and schemas count twice their compact JSON's bytes. */
export const STRUCTURED_FACTOR = 2;

export type BoundableMessage = { role: string; name?: string | undefined; text: string };

/** UTF-8 length (a lone surrogate counts 3, as the U+FFFD it is sent as). */
export const utf8Bytes = (s: string): number => Buffer.byteLength(s, "utf8");

/** Text messages (byok's estimate, and the shape of the simplest managed request): 3 + Σ (4 + role + name + text). */
export function inputTokenUpperBound(messages: BoundableMessage[]): bigint {
  let total = REPLY_PRIMING_TOKENS;
  for (const m of messages) total += PER_MESSAGE_TOKENS + utf8Bytes(m.role) + utf8Bytes(m.name ?? "") + utf8Bytes(m.text);
  return BigInt(total);
}

type Part = { type: string; text?: string; refusal?: string };
type ToolCall = { id: string; function: { name: string; arguments: string } };
/** A message as section 6b accepts it (validated before it is bounded). */
export type ChatMessage = {
  role: string;
  name?: string | undefined;
  content?: string | Part[] | null | undefined;
  refusal?: string | null | undefined;
  tool_calls?: ToolCall[] | undefined;
  tool_call_id?: string | undefined;
  annotations?: unknown[] | undefined;
};
export type ChatTool = { type: string; function: { name: string; description?: string; parameters?: unknown } };
export type PromptOf = {
  messages: ChatMessage[];
  tools?: ChatTool[] | undefined;
  tool_choice?: unknown;
  response_format?: unknown;
};

export type InputBound = { tokens: bigint; imageParts: number };

/** The bound of a section 6b request, images apart (see above). */
export function chatInputBound(prompt: PromptOf): InputBound {
  let total = REPLY_PRIMING_TOKENS;
  let imageParts = 0;
  let toolResults = 0;
  let longestName = FUNCTION_NAME_BYTES;
  for (const m of prompt.messages) {
    total += PER_MESSAGE_TOKENS + utf8Bytes(m.role);
    if (m.name !== undefined) total += utf8Bytes(m.name);
    const content = m.content;
    if (typeof content === "string") total += utf8Bytes(content);
    else if (content) {
      for (const part of content) {
        total += PER_PART_TOKENS;
        if (part.type === "image_url") imageParts++;
        else total += utf8Bytes(part.text ?? part.refusal ?? "");
      }
    }
    if (typeof m.refusal === "string") total += utf8Bytes(m.refusal);
    if (m.annotations && m.annotations.length > 0) total += utf8Bytes(JSON.stringify(m.annotations));
    if (m.tool_calls) {
      for (const call of m.tool_calls) {
        const name = utf8Bytes(call.function.name);
        if (name > longestName) longestName = name;
        total += PER_TOOL_CALL_TOKENS + utf8Bytes(call.id) + name + utf8Bytes(call.function.arguments);
      }
    }
    if (m.tool_call_id !== undefined) {
      toolResults++;
      total += PER_TOOL_RESULT_TOKENS + utf8Bytes(m.tool_call_id);
    }
  }
  if (prompt.tools && prompt.tools.length > 0) {
    total += TOOLS_PREAMBLE_TOKENS;
    for (const tool of prompt.tools) {
      const name = utf8Bytes(tool.function.name);
      if (name > longestName) longestName = name;
      total += PER_TOOL_TOKENS + STRUCTURED_FACTOR * structuredBytes(tool, tool.function.parameters);
    }
  }
  total += toolResults * longestName;
  if (prompt.response_format !== undefined && prompt.response_format !== null) {
    const format = prompt.response_format as { json_schema?: { schema?: unknown } };
    total += STRUCTURED_TOKENS + STRUCTURED_FACTOR * structuredBytes(format, format.json_schema?.schema);
  }
  if (typeof prompt.tool_choice === "object" && prompt.tool_choice !== null) {
    total += STRUCTURED_TOKENS + STRUCTURED_FACTOR * utf8Bytes(JSON.stringify(prompt.tool_choice));
  }
  return { tokens: BigInt(Math.min(total, Number.MAX_SAFE_INTEGER)), imageParts };
}

/** Bytes of `value`'s compact JSON, plus what inlining the local `$ref`s of `schema` (inside it) would add. */
function structuredBytes(value: unknown, schema: unknown): number {
  const json = JSON.stringify(value);
  return utf8Bytes(json) + (schema !== undefined && json.includes('"$ref"') ? schemaBytes(schema) - utf8Bytes(JSON.stringify(schema)) : 0);
}
