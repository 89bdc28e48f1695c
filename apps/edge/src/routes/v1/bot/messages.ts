import { z } from "zod";
import { data } from "../../page.js";
import { created, forward, noContent, ok } from "../../forward.js";
import { BOT_KEY } from "./bot-access.js";
import { ChatParams } from "./chats.types.js";
import { messageView } from "./encode.js";
import { EditMessageRequest, FileMessageRequest, MessageParams, MessagesQuery, MessageView, ReplyRequest } from "./messages.types.js";

export const getChatMessages = forward(BOT_KEY, "get /v1/apps/bot/chats/:chatId/messages", {
  summary: "A chat's messages in the order they were written (oldest first); page on with `after`.",
  params: ChatParams,
  query: MessagesQuery,
  responses: { 200: ["messages, oldest first", data(z.array(MessageView))], 404: "no such chat of this tenant" },
  call: ({ deps, params, query, tenantId }) =>
    deps.services.conversations.ListMessages({ tenant_id: tenantId, chat_id: params.chatId, after: query.after ?? "", limit: query.limit ?? 100 }),
  answer: (res) => ok(res.messages.map(messageView)),
});

/** The bot's message into a chat: text, or a file with a caption, optionally quoting a message of it. */
function botMessage(
  tenantId: string,
  chatId: string,
  message: { kind: "text" | "file"; text: string; file_id: string; reply_to_message_id?: string | undefined },
) {
  return { tenant_id: tenantId, chat_id: chatId, author: "bot", ...message, reply_to_message_id: message.reply_to_message_id ?? "" };
}

export const postReply = forward(BOT_KEY, "post /v1/apps/bot/messages/reply", {
  summary: "The bot writes a text message into a chat (optionally quoting a message of it).",
  body: ReplyRequest,
  responses: { 201: ["sent", data(MessageView)], 404: "no such chat, or reply_to_message_id is not in it" },
  call: ({ deps, body, tenantId }) =>
    deps.services.conversations.CreateMessage(
      botMessage(tenantId, body.chat_id, { kind: "text", text: body.text, file_id: "", reply_to_message_id: body.reply_to_message_id }),
    ),
  answer: (r) => created(messageView(r)),
});

export const postFileMessage = forward(BOT_KEY, "post /v1/apps/bot/messages/file", {
  summary: "The bot sends a file (an id from the files service) with an optional caption.",
  body: FileMessageRequest,
  responses: { 201: ["sent", data(MessageView)], 404: "no such chat or file" },
  call: ({ deps, body, tenantId }) =>
    deps.services.conversations.CreateMessage(
      botMessage(tenantId, body.chat_id, { kind: "file", text: body.caption ?? "", file_id: body.file_id, reply_to_message_id: body.reply_to_message_id }),
    ),
  answer: (r) => created(messageView(r)),
});

export const patchMessage = forward(BOT_KEY, "patch /v1/apps/bot/messages/:messageId", {
  summary: "Edit one of the bot's messages (text, or a file message's caption).",
  params: MessageParams,
  body: EditMessageRequest,
  responses: { 200: ["edited", data(MessageView)], 404: "no such message of this tenant", 409: "a visitor's message, or a deleted one" },
  call: ({ deps, params, body, tenantId }) => deps.services.conversations.UpdateMessage({ tenant_id: tenantId, message_id: params.messageId, text: body.text }),
  answer: (r) => ok(messageView(r)),
});

export const deleteMessage = forward(BOT_KEY, "delete /v1/apps/bot/messages/:messageId", {
  summary: "Delete a message (the bot's or a visitor's); it stays in the history as deleted, without content.",
  params: MessageParams,
  responses: { 204: "deleted (also when it already was)", 404: "no such message of this tenant" },
  call: ({ deps, params, tenantId }) => deps.services.conversations.DeleteMessage({ tenant_id: tenantId, message_id: params.messageId }),
  answer: noContent,
});
