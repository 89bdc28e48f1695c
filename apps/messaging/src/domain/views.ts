import type { BotChat, BotMessage, Conversation, ConversationChannel, ConversationParticipant } from "../generated/prisma/client.js";

/**
 * The public (snake_case) shapes of the hub's resources, as they appear in feed
 * event payloads and webhook bodies. The edge renders the same fields from gRPC.
 */
const iso = (d: Date | null | undefined) => (d ? d.toISOString() : null);

export function messageData(m: BotMessage) {
  const deleted = m.deletedAt !== null;
  return {
    id: m.id,
    chat_id: m.chatId,
    author: m.author,
    kind: m.kind,
    text: deleted ? null : m.text,
    file_id: deleted ? null : m.fileId,
    reply_to_message_id: m.replyToMessageId,
    deleted,
    edited_at: iso(m.editedAt),
    created_at: m.createdAt.toISOString(),
  };
}

export function chatData(c: BotChat) {
  return {
    id: c.id,
    bot_id: c.botId,
    visitor_id: c.visitorId,
    display_name: c.displayName,
    conversation_id: c.conversationId,
    created_at: c.createdAt.toISOString(),
  };
}

export function participantData(p: ConversationParticipant) {
  return {
    id: p.id,
    conversation_id: p.conversationId,
    kind: p.kind,
    external_id: p.externalId,
    display_name: p.displayName,
    role: p.role,
    created_at: p.createdAt.toISOString(),
    updated_at: p.updatedAt.toISOString(),
  };
}

export function channelData(c: ConversationChannel) {
  return { id: c.id, conversation_id: c.conversationId, type: c.type, ref: c.ref, created_at: c.createdAt.toISOString() };
}

export function conversationData(c: Conversation) {
  return {
    id: c.id,
    subject: c.subject,
    status: c.status,
    metadata: c.metadata,
    version: c.version,
    last_activity_at: c.lastActivityAt.toISOString(),
    created_at: c.createdAt.toISOString(),
    updated_at: c.updatedAt.toISOString(),
  };
}
