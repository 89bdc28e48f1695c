/**
 * An upper bound on the input tokens a provider counts for a chat request.
 *
 * Byte-level BPE tokenizers (OpenAI's and every OpenAI-compatible one we know)
 * map each token to at least one byte of the text, so a text never has more
 * tokens than UTF-8 bytes. The chat format adds at most 4 tokens per message
 * (start marker, role, separator, end marker) and 3 to prime the reply; role and
 * name are text too. Hence, per request:
 *   3 + Σ over messages (4 + bytes(role) + bytes(name) + bytes(content))
 * which is never below the provider's own count for the same messages. Only
 * text content is accepted on managed models (see chat-request.ts), so nothing
 * else enters the prompt.
 */
export const REPLY_PRIMING_TOKENS = 3;
export const PER_MESSAGE_TOKENS = 4;

export type BoundableMessage = { role: string; name?: string | undefined; text: string };

const encoder = new TextEncoder();
const bytes = (s: string) => encoder.encode(s).length;

export function inputTokenUpperBound(messages: BoundableMessage[]): bigint {
  let total = REPLY_PRIMING_TOKENS;
  for (const m of messages) total += PER_MESSAGE_TOKENS + bytes(m.role) + bytes(m.name ?? "") + bytes(m.text);
  return BigInt(total);
}
