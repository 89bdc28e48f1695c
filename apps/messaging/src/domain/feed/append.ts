import type { Tx } from "../../db.js";

export type FeedStream = "widget" | "conversation";

/** One feed per tenant and stream kind; positions count 1, 2, 3 within it. */
export function streamKey(stream: FeedStream, tenantId: string): string {
  return `${stream}:${tenantId}`;
}

export type FeedEventInput = {
  /** The row's id (`feedEventId`: derived from the event it projects). */
  id: string;
  stream: FeedStream;
  tenantId: string;
  type: string;
  chatId?: string | null;
  conversationId?: string | null;
  data: Record<string, unknown>;
};

/**
 * Appends an event to a tenant's feed inside the caller's transaction (the projection of a
 * catalog event, `projectToFeed`: nothing else writes the feed).
 *
 * The position comes from the stream's counter row, incremented in the same
 * statement: the row stays locked until the transaction ends, so a second
 * writer of the stream waits and gets the next position only after the first
 * has committed (or rolled back, giving the number back). Positions therefore
 * become visible in order, without holes: a reader that sees position n has
 * already been able to see every position below it (docs/decisions/0121).
 * Append last in a transaction, to hold the lock briefly.
 *
 * Conversation events also queue a delivery for every active webhook of the
 * tenant that wants the event type, in the same statement.
 */
export async function appendFeedEvent(tx: Tx, event: FeedEventInput): Promise<{ id: string; position: bigint }> {
  const { id } = event;
  const rows = await tx.$queryRawUnsafe<{ position: bigint }[]>(
    `WITH pos AS (
       INSERT INTO event_streams (stream, last_position) VALUES ($1, 1)
       ON CONFLICT (stream) DO UPDATE SET last_position = event_streams.last_position + 1
       RETURNING last_position
     )
     INSERT INTO feed_events (stream, position, id, tenant_id, type, chat_id, conversation_id, data)
     SELECT $1, last_position, $2, $3, $4, $5, $6, $7::jsonb FROM pos
     RETURNING position`,
    streamKey(event.stream, event.tenantId),
    id,
    event.tenantId,
    event.type,
    event.chatId ?? null,
    event.conversationId ?? null,
    JSON.stringify(event.data),
  );
  if (event.stream === "conversation") {
    await tx.$executeRawUnsafe(
      `INSERT INTO webhook_deliveries (id, tenant_id, webhook_id, event_id, state, next_attempt_at, created_at, updated_at)
       SELECT 'whd_' || replace(gen_random_uuid()::text, '-', ''), tenant_id, id, $2, 'pending', now(), now(), now()
       FROM conversation_webhooks
       WHERE tenant_id = $1 AND status = 'active' AND (cardinality(event_types) = 0 OR $3 = ANY(event_types))`,
      event.tenantId,
      id,
      event.type,
    );
  }
  return { id, position: rows[0]!.position };
}
