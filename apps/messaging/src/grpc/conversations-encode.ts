import type { messaging } from "@gateway/protos";
import type {
  BotChat,
  BotInstance,
  BotMessage,
  ConversationChannel,
  ConversationParticipant,
  ConversationWebhook,
  WebhookDelivery,
  WidgetSession,
} from "../generated/prisma/client.js";
import type { ConversationDetail } from "../domain/conversations/find.js";
import type { FeedEventView } from "../domain/feed/list.js";
import type { WidgetGrant } from "../domain/widget-sessions/create.js";

const iso = (d: Date | null | undefined) => (d ? d.toISOString() : "");

export const encodeBot = (b: BotInstance): messaging.Bot => ({
  id: b.id,
  tenant_id: b.tenantId,
  name: b.name,
  welcome_message: b.welcomeMessage ?? "",
  created_at: iso(b.createdAt),
});

export const encodeChat = (c: BotChat): messaging.Chat => ({
  id: c.id,
  bot_id: c.botId ?? "",
  visitor_id: c.visitorId,
  display_name: c.displayName ?? "",
  conversation_id: c.conversationId ?? "",
  last_message_at: iso(c.lastMessageAt),
  created_at: iso(c.createdAt),
});

export const encodeMessage = (m: BotMessage): messaging.BotMessage => ({
  id: m.id,
  chat_id: m.chatId,
  author: m.author,
  kind: m.kind,
  text: m.deletedAt ? "" : (m.text ?? ""),
  file_id: m.deletedAt ? "" : (m.fileId ?? ""),
  reply_to_message_id: m.replyToMessageId ?? "",
  deleted: m.deletedAt !== null,
  edited_at: iso(m.editedAt),
  created_at: iso(m.createdAt),
});

export const encodeGrant = (g: WidgetGrant): messaging.WidgetSessionGrant => ({
  session_id: g.sessionId,
  chat_id: g.chatId,
  refresh_token: g.refreshToken,
  tenant_id: g.tenantId,
  visitor_id: g.visitorId,
  conversation_id: g.conversationId ?? "",
  refresh_expires_at: iso(g.refreshExpiresAt),
  generation: g.generation,
});

export const encodeSession = (s: WidgetSession): messaging.WidgetSession => ({
  id: s.id,
  tenant_id: s.tenantId,
  chat_id: s.chatId,
  visitor_id: s.visitorId,
  display_name: s.displayName ?? "",
  revoked: s.revokedAt !== null,
  created_at: iso(s.createdAt),
  conversation_id: s.conversationId ?? "",
  generation: s.generation,
  revoked_at: s.revokedAt ? iso(s.revokedAt) : "",
  revoked_reason: s.revokedReason ?? "",
});

export const encodeEvent = (e: FeedEventView): messaging.StreamEvent => ({
  id: e.id,
  cursor: e.cursor,
  type: e.type,
  chat_id: e.chatId ?? "",
  conversation_id: e.conversationId ?? "",
  data_json: JSON.stringify(e.data),
  created_at: iso(e.createdAt),
});

export const encodeParticipant = (p: ConversationParticipant): messaging.Participant => ({
  id: p.id,
  conversation_id: p.conversationId,
  kind: p.kind,
  external_id: p.externalId,
  display_name: p.displayName ?? "",
  role: p.role,
  created_at: iso(p.createdAt),
  updated_at: iso(p.updatedAt),
});

export const encodeChannel = (c: ConversationChannel): messaging.Channel => ({
  id: c.id,
  conversation_id: c.conversationId,
  type: c.type,
  ref: c.ref,
  created_at: iso(c.createdAt),
});

export const encodeConversation = ({ conversation: c, participants, channels }: ConversationDetail): messaging.Conversation => ({
  id: c.id,
  subject: c.subject ?? "",
  status: c.status,
  metadata_json: JSON.stringify(c.metadata ?? {}),
  version: c.version,
  participants: participants.map(encodeParticipant),
  channels: channels.map(encodeChannel),
  last_activity_at: iso(c.lastActivityAt),
  created_at: iso(c.createdAt),
  updated_at: iso(c.updatedAt),
});

export const encodeWebhook = (w: ConversationWebhook): messaging.Webhook => ({
  id: w.id,
  url: w.url,
  event_types: w.eventTypes,
  status: w.status,
  created_at: iso(w.createdAt),
  revoked_at: iso(w.revokedAt),
});

export const encodeDelivery = ({
  delivery: d,
  eventType,
  cursor,
}: {
  delivery: WebhookDelivery;
  eventType: string;
  cursor: string;
}): messaging.WebhookDelivery => ({
  id: d.id,
  webhook_id: d.webhookId,
  event_id: d.eventId,
  event_type: eventType,
  cursor,
  state: d.state,
  attempts: d.attempts,
  ...(d.lastStatus === null ? {} : { last_status: d.lastStatus }),
  last_error: d.lastError ?? "",
  replay: d.replay,
  next_attempt_at: d.state === "pending" ? iso(d.nextAttemptAt) : "",
  created_at: iso(d.createdAt),
  updated_at: iso(d.updatedAt),
});
