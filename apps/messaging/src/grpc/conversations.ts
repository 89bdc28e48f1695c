import { AppError } from "@gateway/errors";
import type { Implementation } from "@gateway/grpc-kit";
import type { conversationsV1 } from "@gateway/protos";
import { createBot } from "../domain/bots/create.js";
import { chatAction } from "../domain/chats/action.js";
import { listChats } from "../domain/chats/list.js";
import { addChannel, removeChannel, updateChannel } from "../domain/conversations/channels.js";
import { createConversation } from "../domain/conversations/create.js";
import { getConversation, listInbox } from "../domain/conversations/find.js";
import { addParticipant, removeParticipant, updateParticipant } from "../domain/conversations/participants.js";
import { updateConversation } from "../domain/conversations/update.js";
import { listFeed } from "../domain/feed/list.js";
import type { HubContext } from "../domain/hub-context.js";
import { createMessage } from "../domain/messages/create.js";
import { listMessages } from "../domain/messages/list.js";
import { deleteMessage, updateMessage } from "../domain/messages/update.js";
import { listDeliveries, listWebhooks, registerWebhook, replayWebhook, revokeWebhook } from "../domain/webhooks/register.js";
import { createWidgetSession } from "../domain/widget-sessions/create.js";
import { refreshWidgetSession } from "../domain/widget-sessions/refresh.js";
import { listWidgetSessions } from "../domain/widget-sessions/list.js";
import { getWidgetSession, revokeWidgetSession } from "../domain/widget-sessions/revoke.js";
import {
  encodeBot,
  encodeChannel,
  encodeChat,
  encodeConversation,
  encodeDelivery,
  encodeEvent,
  encodeGrant,
  encodeMessage,
  encodeParticipant,
  encodeSession,
  encodeWebhook,
} from "./conversations-encode.js";

function oneOf<T extends string>(value: string, allowed: readonly T[], name: string): T {
  if (!(allowed as readonly string[]).includes(value)) throw new AppError("invalid_request", `${name} must be one of ${allowed.join(", ")}.`);
  return value as T;
}

/** The conversation a request addresses, as the domain verbs take it. */
const inConversation = (req: { tenant_id: string; conversation_id: string }) => ({ tenantId: req.tenant_id, conversationId: req.conversation_id });

/** Transport only: decode, call the domain, encode. */
export function conversationHandlers(ctx: HubContext): Implementation<typeof conversationsV1> {
  return {
    async CreateBot(req) {
      return encodeBot(await createBot({ ctx, input: { tenantId: req.tenant_id, name: req.name, welcomeMessage: req.welcome_message } }));
    },
    async ListChats(req) {
      return { chats: (await listChats({ ctx, input: { tenantId: req.tenant_id, botId: req.bot_id, limit: req.limit } })).map(encodeChat) };
    },
    async ListMessages(req) {
      const messages = await listMessages({ ctx, input: { tenantId: req.tenant_id, chatId: req.chat_id, after: req.after, limit: req.limit } });
      return { messages: messages.map(encodeMessage) };
    },
    async CreateMessage(req) {
      const message = await createMessage({
        ctx,
        input: {
          tenantId: req.tenant_id,
          chatId: req.chat_id,
          author: oneOf(req.author, ["bot", "visitor"], "author"),
          kind: oneOf(req.kind, ["text", "file"], "kind"),
          text: req.text,
          fileId: req.file_id,
          replyToMessageId: req.reply_to_message_id,
        },
      });
      return encodeMessage(message);
    },
    async UpdateMessage(req) {
      return encodeMessage(await updateMessage({ ctx, input: { tenantId: req.tenant_id, messageId: req.message_id, text: req.text } }));
    },
    async DeleteMessage(req) {
      return encodeMessage(await deleteMessage({ ctx, input: { tenantId: req.tenant_id, messageId: req.message_id } }));
    },
    async ChatAction(req) {
      const result = await chatAction({
        ctx,
        input: { tenantId: req.tenant_id, chatId: req.chat_id, action: req.action, author: oneOf(req.author || "bot", ["bot", "visitor"], "author") },
      });
      return { chat_id: result.chatId, action: result.action, event_id: result.eventId };
    },
    async CreateWidgetSession(req) {
      const grant = await createWidgetSession({
        ctx,
        input: { tenantId: req.tenant_id, visitorId: req.visitor_id, displayName: req.display_name, botId: req.bot_id, conversationId: req.conversation_id },
      });
      return encodeGrant(grant);
    },
    async RefreshWidgetSession(req) {
      const outcome = await refreshWidgetSession({ ctx, input: { refreshToken: req.refresh_token } });
      if (outcome.kind === "rotated") return { outcome: "rotated", grant: encodeGrant(outcome.grant), revoked_session_id: "" };
      return { outcome: outcome.kind, revoked_session_id: outcome.kind === "reused" ? outcome.sessionId : "" };
    },
    async RevokeWidgetSession(req) {
      return { revoked: await revokeWidgetSession({ ctx, input: { tenantId: req.tenant_id, sessionId: req.session_id } }) };
    },
    async GetWidgetSession(req) {
      return encodeSession(await getWidgetSession({ ctx, input: { sessionId: req.session_id } }));
    },
    async ListWidgetSessions(req) {
      const sessions = await listWidgetSessions({ ctx, input: { ...inConversation(req), limit: req.limit } });
      return { sessions: sessions.map(encodeSession) };
    },
    async ListEvents(req) {
      const page = await listFeed({
        ctx,
        input: {
          tenantId: req.tenant_id,
          stream: oneOf(req.stream, ["widget", "conversation"], "stream"),
          cursor: req.cursor,
          limit: req.limit,
          ...(req.chat_id ? { chatId: req.chat_id } : {}),
        },
      });
      return { events: page.events.map(encodeEvent), next_cursor: page.nextCursor };
    },
    async CreateConversation(req) {
      const detail = await createConversation({
        ctx,
        input: { tenantId: req.tenant_id, subject: req.subject, metadataJson: req.metadata_json, participants: req.participants },
      });
      return encodeConversation(detail);
    },
    async ListInbox(req) {
      return { conversations: (await listInbox({ ctx, input: { tenantId: req.tenant_id, status: req.status, limit: req.limit } })).map(encodeConversation) };
    },
    async GetConversation(req) {
      return encodeConversation(await getConversation({ ctx, input: { tenantId: req.tenant_id, id: req.id } }));
    },
    async UpdateConversation(req) {
      const detail = await updateConversation({
        ctx,
        input: {
          tenantId: req.tenant_id,
          id: req.id,
          status: req.status,
          metadataJson: req.metadata_json,
          ...(req.subject !== undefined && req.subject !== null ? { subject: req.subject } : {}),
          ...(req.version !== undefined && req.version !== null ? { version: req.version } : {}),
        },
      });
      return encodeConversation(detail);
    },
    async AddParticipant(req) {
      return encodeParticipant(await addParticipant({ ctx, input: { ...req, ...inConversation(req) } }));
    },
    async UpdateParticipant(req) {
      const participant = await updateParticipant({
        ctx,
        input: {
          ...inConversation(req),
          participantId: req.participant_id,
          role: req.role,
          ...(req.display_name !== undefined && req.display_name !== null ? { displayName: req.display_name } : {}),
        },
      });
      return encodeParticipant(participant);
    },
    async RemoveParticipant(req) {
      await removeParticipant({ ctx, input: { ...inConversation(req), participantId: req.participant_id } });
      return {};
    },
    async AddChannel(req) {
      return encodeChannel(await addChannel({ ctx, input: { ...inConversation(req), type: req.type, ref: req.ref } }));
    },
    async UpdateChannel(req) {
      return encodeChannel(await updateChannel({ ctx, input: { ...inConversation(req), channelId: req.channel_id, type: req.type, ref: req.ref } }));
    },
    async RemoveChannel(req) {
      await removeChannel({ ctx, input: { ...inConversation(req), channelId: req.channel_id } });
      return {};
    },
    async RegisterWebhook(req) {
      return encodeWebhook(await registerWebhook({ ctx, input: { tenantId: req.tenant_id, url: req.url, secret: req.secret, eventTypes: req.event_types } }));
    },
    async ListWebhooks(req) {
      return { webhooks: (await listWebhooks({ ctx, input: { tenantId: req.tenant_id } })).map(encodeWebhook) };
    },
    async RevokeWebhook(req) {
      return encodeWebhook(await revokeWebhook({ ctx, input: { tenantId: req.tenant_id, id: req.id } }));
    },
    async ReplayWebhook(req) {
      const result = await replayWebhook({ ctx, input: { tenantId: req.tenant_id, id: req.id, cursor: req.cursor, limit: req.limit } });
      return { webhook_id: result.webhookId, queued: result.queued, from_cursor: result.fromCursor, next_cursor: result.nextCursor };
    },
    async ListWebhookDeliveries(req) {
      return {
        deliveries: (await listDeliveries({ ctx, input: { tenantId: req.tenant_id, webhookId: req.webhook_id, limit: req.limit } })).map(encodeDelivery),
      };
    },
  };
}
