import { z } from "zod";
import type { EdgeDeps } from "../../../deps.js";
import { keyPrincipal } from "../../../http/access.js";
import { defineRoute } from "../../../http/route.js";
import { data } from "../../page.js";
import { BOT, TAGS } from "./bot-access.js";
import { ChatParams } from "./chats.types.js";
import { messageView } from "./encode.js";
import { EditMessageRequest, FileMessageRequest, MessageParams, MessagesQuery, MessageView, ReplyRequest } from "./messages.types.js";

export const getChatMessages = defineRoute<EdgeDeps, ChatParams, MessagesQuery>({
  method: "get",
  path: "/v1/apps/bot/chats/:chatId/messages",
  summary: "A chat's messages in the order they were written (oldest first); page on with `after`.",
  tags: TAGS,
  access: BOT,
  params: ChatParams,
  query: MessagesQuery,
  responses: { 200: { description: "messages, oldest first", schema: data(z.array(MessageView)) }, 404: { description: "no such chat of this tenant" } },
  async handler({ deps, params, query, principal }) {
    const res = await deps.services.conversations.ListMessages({
      tenant_id: keyPrincipal(principal).tenantId,
      chat_id: params.chatId,
      after: query.after ?? "",
      limit: query.limit ?? 100,
    });
    return { status: 200, body: { data: res.messages.map(messageView) } };
  },
});

export const postReply = defineRoute<EdgeDeps, Record<string, never>, Record<string, never>, ReplyRequest>({
  method: "post",
  path: "/v1/apps/bot/messages/reply",
  summary: "The bot writes a text message into a chat (optionally quoting a message of it).",
  tags: TAGS,
  access: BOT,
  body: ReplyRequest,
  responses: { 201: { description: "sent", schema: data(MessageView) }, 404: { description: "no such chat, or reply_to_message_id is not in it" } },
  async handler({ deps, body, principal }) {
    const message = await deps.services.conversations.CreateMessage({
      tenant_id: keyPrincipal(principal).tenantId,
      chat_id: body.chat_id,
      author: "bot",
      kind: "text",
      text: body.text,
      file_id: "",
      reply_to_message_id: body.reply_to_message_id ?? "",
    });
    return { status: 201, body: { data: messageView(message) } };
  },
});

export const postFileMessage = defineRoute<EdgeDeps, Record<string, never>, Record<string, never>, FileMessageRequest>({
  method: "post",
  path: "/v1/apps/bot/messages/file",
  summary: "The bot sends a file (an id from the files service) with an optional caption.",
  tags: TAGS,
  access: BOT,
  body: FileMessageRequest,
  responses: { 201: { description: "sent", schema: data(MessageView) }, 404: { description: "no such chat or file" } },
  async handler({ deps, body, principal }) {
    const message = await deps.services.conversations.CreateMessage({
      tenant_id: keyPrincipal(principal).tenantId,
      chat_id: body.chat_id,
      author: "bot",
      kind: "file",
      text: body.caption ?? "",
      file_id: body.file_id,
      reply_to_message_id: body.reply_to_message_id ?? "",
    });
    return { status: 201, body: { data: messageView(message) } };
  },
});

export const patchMessage = defineRoute<EdgeDeps, MessageParams, Record<string, never>, EditMessageRequest>({
  method: "patch",
  path: "/v1/apps/bot/messages/:messageId",
  summary: "Edit one of the bot's messages (text, or a file message's caption).",
  tags: TAGS,
  access: BOT,
  params: MessageParams,
  body: EditMessageRequest,
  responses: {
    200: { description: "edited", schema: data(MessageView) },
    404: { description: "no such message of this tenant" },
    409: { description: "a visitor's message, or a deleted one" },
  },
  async handler({ deps, params, body, principal }) {
    const message = await deps.services.conversations.UpdateMessage({
      tenant_id: keyPrincipal(principal).tenantId,
      message_id: params.messageId,
      text: body.text,
    });
    return { status: 200, body: { data: messageView(message) } };
  },
});

export const deleteMessage = defineRoute<EdgeDeps, MessageParams>({
  method: "delete",
  path: "/v1/apps/bot/messages/:messageId",
  summary: "Delete a message (the bot's or a visitor's); it stays in the history as deleted, without content.",
  tags: TAGS,
  access: BOT,
  params: MessageParams,
  responses: { 204: { description: "deleted (also when it already was)" }, 404: { description: "no such message of this tenant" } },
  async handler({ deps, params, principal }) {
    await deps.services.conversations.DeleteMessage({ tenant_id: keyPrincipal(principal).tenantId, message_id: params.messageId });
    return { status: 204 };
  },
});
