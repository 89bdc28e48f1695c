import { z } from "zod";
import { data } from "../../page.js";
import { accepted, forward, ok } from "../../forward.js";
import { BOT_KEY } from "./bot-access.js";
import { ActionRequest, ActionView, ChatParams, ChatsQuery, ChatView } from "./chats.types.js";
import { chatView } from "./encode.js";

export const getChats = forward(BOT_KEY, "get /v1/apps/bot/chats", {
  summary: "The tenant's bot chats, newest first (at most 100).",
  query: ChatsQuery,
  responses: { 200: ["chats", data(z.array(ChatView))] },
  call: ({ deps, query, tenantId }) => deps.services.conversations.ListChats({ tenant_id: tenantId, limit: query.limit ?? 100, bot_id: query.bot_id ?? "" }),
  answer: (res) => ok(res.chats.map(chatView)),
});

export const postChatAction = forward(BOT_KEY, "post /v1/apps/bot/chats/:chatId/actions", {
  summary: "A chat action: typing or read signals for the widget, or `end` (ends the chat's widget sessions at once).",
  params: ChatParams,
  body: ActionRequest,
  responses: { 202: ["recorded on the widget feed", data(ActionView)], 404: "no such chat of this tenant" },
  call: ({ deps, params, body, tenantId }) =>
    deps.services.conversations.ChatAction({ tenant_id: tenantId, chat_id: params.chatId, action: body.action, author: "bot" }),
  answer: (res) => accepted(res),
});
