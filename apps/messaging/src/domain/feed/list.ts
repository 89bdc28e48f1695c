import { decodeCursor, encodeCursor } from "@gateway/contract";
import type { HubContext } from "../hub-context.js";
import { streamKey, type FeedStream } from "./append.js";

export type FeedEventView = {
  id: string;
  cursor: string;
  type: string;
  chatId: string | null;
  conversationId: string | null;
  data: unknown;
  createdAt: Date;
};

/**
 * A cursor is the position of the last event seen, in the one cursor format
 * (docs/decisions/0202); empty is the start of the feed (position 0).
 */
export function parseCursor(cursor: string): bigint {
  return decodeCursor(cursor) ?? 0n;
}

/**
 * Events after `cursor` in position order. Because positions commit in order
 * (see append.ts), everything at or below the last position returned was
 * already committed when it was read: paging on from `next_cursor` neither
 * skips nor repeats an event, while writers keep appending.
 */
export async function listFeed({
  ctx,
  input,
}: {
  ctx: HubContext;
  input: { tenantId: string; stream: FeedStream; cursor: string; limit: number; chatId?: string };
}): Promise<{ events: FeedEventView[]; nextCursor: string }> {
  const after = parseCursor(input.cursor);
  const limit = Math.min(Math.max(input.limit || 100, 1), 100);
  const values: unknown[] = [streamKey(input.stream, input.tenantId), after, limit];
  let filter = "";
  if (input.chatId) {
    values.push(input.chatId);
    filter = " AND chat_id = $4";
  }
  const rows = await ctx.prisma.$queryRawUnsafe<
    { id: string; position: bigint; type: string; chat_id: string | null; conversation_id: string | null; data: unknown; created_at: Date }[]
  >(
    `SELECT id, position, type, chat_id, conversation_id, data, created_at FROM feed_events
     WHERE stream = $1 AND position > $2${filter} ORDER BY position LIMIT $3`,
    ...values,
  );
  const events = rows.map((r) => ({
    id: r.id,
    cursor: encodeCursor(r.position),
    type: r.type,
    chatId: r.chat_id,
    conversationId: r.conversation_id,
    data: r.data,
    createdAt: r.created_at,
  }));
  return { events, nextCursor: events.at(-1)?.cursor ?? encodeCursor(after) };
}
