/**
 * The mock provider's deterministic text and token rules, exported so tests can
 * compute the exact usage a request will report:
 *
 *   tokens(text)      = ceil(UTF-8 bytes of text / 4)
 *   prompt_tokens     = ceil(UTF-8 bytes of all message contents / 4) + 3 per message + 3
 *   reply             = "Mock reply to: " + the text of the last user message
 *                       ("Mock reply." without one), cut to at most max_tokens tokens
 *   completion_tokens = tokens(reply) (never above max_tokens)
 */
export type ChatMessage = { role: string; content?: unknown };

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

export function promptTokens(messages: ChatMessage[]): number {
  const bytes = messages.reduce((sum, m) => sum + utf8Bytes(contentText(m.content)), 0);
  return Math.ceil(bytes / 4) + TOKENS_PER_MESSAGE * messages.length + TOKENS_PER_PROMPT;
}

export function replyFor(messages: ChatMessage[]): string {
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
