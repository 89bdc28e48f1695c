import { createHash } from "node:crypto";
import type { EventData, EventType } from "@gateway/events";
import type { Transact } from "@gateway/events-runtime";
import type { HubTransact, Tx } from "../../db.js";
import { appendFeedEvent, type FeedStream } from "./append.js";

/**
 * The feeds' kinds, each a catalog event type, and the streams its rows go to (docs/decisions/0124,
 * 0225). In this order the two lists below are the contract's. A message's event goes to the
 * conversation stream only when its chat is a channel of a conversation. Where a transaction
 * writes both streams, the conversation stream's row comes first (its counter row is locked
 * first, as when a widget session joins a conversation), so two writers never wait for each
 * other's counters in opposite orders.
 */
const STREAMS = {
  "chat.created": ["widget"],
  "session.created": ["widget"],
  "session.revoked": ["widget"],
  "conversation.created": ["conversation"],
  "conversation.updated": ["conversation"],
  "participant.added": ["conversation"],
  "participant.updated": ["conversation"],
  "participant.removed": ["conversation"],
  "channel.added": ["conversation"],
  "channel.updated": ["conversation"],
  "channel.removed": ["conversation"],
  "widget_session.created": ["conversation"],
  "message.created": ["conversation", "widget"],
  "message.updated": ["conversation", "widget"],
  "message.deleted": ["conversation", "widget"],
  "chat.action": ["widget"],
} as const satisfies Partial<Record<EventType, readonly FeedStream[]>>;

export type FeedKind = keyof typeof STREAMS;

const kinds = Object.keys(STREAMS) as FeedKind[];
/** The widget feed's kinds (`GET /v1/apps/bot/widget/events`). */
export const WIDGET_EVENT_TYPES = kinds.filter((k) => (STREAMS[k] as readonly FeedStream[]).includes("widget"));
/** The conversation feed's kinds (`GET /v1/conversations/events`, conversation webhooks). */
export const CONVERSATION_EVENT_TYPES = kinds.filter((k) => (STREAMS[k] as readonly FeedStream[]).includes("conversation"));
export type ConversationEventType = (typeof CONVERSATION_EVENT_TYPES)[number];

export function isFeedKind(type: string): type is FeedKind {
  return Object.hasOwn(STREAMS, type);
}

/**
 * The id of an event's row on a feed stream: derived from the event's id (`fev_` and 26 hex
 * digits of md5(event id || ':' || stream)), so each row names the event it projects.
 */
export function feedEventId(eventId: string, stream: FeedStream): string {
  return `fev_${createHash("md5").update(`${eventId}:${stream}`).digest("hex").slice(0, 26).toUpperCase()}`;
}

type FeedFields = { tenant_id: string; chat_id?: string | null; conversation_id?: string | null; reason?: string };

/**
 * Writes an event's feed rows, in the transaction that emitted it. A session that ended with
 * its chat is on the feed as the chat's `end` action, not as a revocation of its own.
 */
export async function projectToFeed(tx: Tx, event: { id: string; type: FeedKind; data: FeedFields }, view: Record<string, unknown> | undefined): Promise<void> {
  const { data } = event;
  if (event.type === "session.revoked" && data.reason === "chat_ended") return;
  for (const stream of STREAMS[event.type]) {
    if (stream === "conversation" && !data.conversation_id) continue;
    if (!view) throw new Error(`feed event ${event.type} emitted without its view`);
    await appendFeedEvent(tx, {
      id: feedEventId(event.id, stream),
      stream,
      tenantId: data.tenant_id,
      type: event.type,
      chatId: data.chat_id ?? null,
      conversationId: data.conversation_id ?? null,
      data: view,
    });
  }
}

/**
 * The service's transactions with the feed as a projection: `emit` of a feed kind writes the
 * event to the outbox and its feed rows, from `view` (the resource after the change).
 */
export function withFeed(transact: Transact<Tx>): HubTransact {
  return (fn) =>
    transact((tx, emit) =>
      fn(tx, async (type, data, options = {}) => {
        const { view, ...emitOptions } = options;
        if (!isFeedKind(type)) return emit(type, data, emitOptions);
        const id = await emit(type, data, emitOptions);
        await projectToFeed(tx, { id, type, data: data as EventData<FeedKind> }, view);
        return id;
      }),
    );
}
