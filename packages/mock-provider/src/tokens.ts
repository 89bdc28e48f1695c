/**
 * The mock provider's deterministic text and token rules, exported so tests can
 * compute the exact usage a request will report:
 *
 *   tokens(text)      = ceil(UTF-8 bytes of text / 4)
 *   prompt_tokens     = ceil(UTF-8 bytes of all prompt text / 4) + 3 per message + 3
 *                       + 85 per image part + (7 per tool + 12 when tools are offered)
 *                       where prompt text is message contents (text parts' `text`),
 *                       refusals, tool calls' names and arguments, and the JSON of
 *                       `tools` and of a `json_schema` response format
 *   reply             = "Mock reply to: " + the text of the last user message
 *                       ("Mock reply." without one), cut before the first of the request's
 *                       `stop` sequences it contains, then to at most max_tokens tokens;
 *                       after tool results (tool messages after the last assistant one)
 *                       "Mock reply to tool results: " + their text
 *   completion_tokens = tokens(reply) per choice (never above max_tokens); a tool
 *                       call counts tokens(name + arguments)
 */
export type ChatMessage = {
  role: string;
  content?: unknown;
  refusal?: unknown;
  tool_calls?: { function?: { name?: unknown; arguments?: unknown } }[];
};

const encoder = new TextEncoder();

export function utf8Bytes(text: string): number {
  return encoder.encode(text).length;
}

export function countTokens(text: string): number {
  return Math.ceil(utf8Bytes(text) / 4);
}

/** The text of a message's content: a string, or the `text` of its parts (`[{type: "text", text}]`). */
export function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content
      .map((part) => (part && typeof part === "object" && typeof (part as { text?: unknown }).text === "string" ? (part as { text: string }).text : ""))
      .join("");
  }
  return "";
}

export const TOKENS_PER_MESSAGE = 3;
export const TOKENS_PER_PROMPT = 3;
/** What the mock charges for one image part (OpenAI's low-detail figure). */
export const TOKENS_PER_IMAGE = 85;
export const TOKENS_PER_TOOL = 7;
export const TOKENS_FOR_TOOLS = 12;

const imagesOf = (content: unknown) => (Array.isArray(content) ? content.filter((p) => (p as { type?: unknown } | null)?.type === "image_url").length : 0);

function messageText(m: ChatMessage): string {
  let text = contentText(m.content);
  if (typeof m.refusal === "string") text += m.refusal;
  for (const call of m.tool_calls ?? []) text += `${String(call.function?.name ?? "")}${String(call.function?.arguments ?? "")}`;
  return text;
}

/** The request's prompt tokens (see above); `extras` are the request's `tools` and `response_format`. */
export function promptTokens(messages: ChatMessage[], extras: { tools?: unknown[] | undefined; response_format?: unknown } = {}): number {
  let bytes = messages.reduce((sum, m) => sum + utf8Bytes(messageText(m)), 0);
  const tools = extras.tools ?? [];
  if (tools.length > 0) bytes += utf8Bytes(JSON.stringify(tools));
  if ((extras.response_format as { type?: unknown } | undefined)?.type === "json_schema") bytes += utf8Bytes(JSON.stringify(extras.response_format));
  const images = messages.reduce((sum, m) => sum + imagesOf(m.content), 0);
  return (
    Math.ceil(bytes / 4) +
    TOKENS_PER_MESSAGE * messages.length +
    TOKENS_PER_PROMPT +
    TOKENS_PER_IMAGE * images +
    (tools.length > 0 ? TOKENS_PER_TOOL * tools.length + TOKENS_FOR_TOOLS : 0)
  );
}

/**
 * The texts of the tool results that answer the last assistant turn (the tool messages
 * after it, whatever else follows them, such as a user's note or a system turn); null
 * when there are none.
 */
export function toolResultsOf(messages: ChatMessage[]): string[] | null {
  const results: string[] = [];
  for (let i = messages.length - 1; i >= 0 && messages[i]!.role !== "assistant"; i--) {
    if (messages[i]!.role === "tool") results.unshift(contentText(messages[i]!.content));
  }
  return results.length > 0 ? results : null;
}

export function replyFor(messages: ChatMessage[]): string {
  const results = toolResultsOf(messages);
  if (results) return `Mock reply to tool results: ${results.join(" ")}`;
  const lastUser = [...messages].reverse().find((m) => m.role === "user");
  return lastUser ? `Mock reply to: ${contentText(lastUser.content)}` : "Mock reply.";
}

/** The longest prefix of `text` (whole characters) of at most `maxTokens` tokens. */
export function truncateToTokens(text: string, maxTokens: number | undefined): { text: string; truncated: boolean } {
  if (maxTokens === undefined || countTokens(text) <= maxTokens) return { text, truncated: false };
  const budget = maxTokens * 4;
  let out = "";
  let bytes = 0;
  for (const char of text) {
    const size = utf8Bytes(char);
    if (bytes + size > budget) break;
    out += char;
    bytes += size;
  }
  return { text: out, truncated: true };
}

/** The pieces a streamed reply is sent in: words with their following space. */
export function streamPieces(text: string): string[] {
  return text.match(/\S+\s*|\s+/g) ?? [];
}
