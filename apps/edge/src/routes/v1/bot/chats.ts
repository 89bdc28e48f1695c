import { z } from "zod";
import type { EdgeDeps } from "../../../deps.js";
import { keyPrincipal } from "../../../http/access.js";
import { defineRoute } from "../../../http/route.js";
import { data } from "../../page.js";
import { BOT, TAGS } from "./bot-access.js";
import { ActionRequest, ActionView, ChatParams, ChatsQuery, ChatView } from "./chats.types.js";
import { chatView } from "./encode.js";

export const getChats = defineRoute<EdgeDeps, Record<string, never>, ChatsQuery>({
  method: "get",
  path: "/v1/apps/bot/chats",
  summary: "The tenant's bot chats, newest first (at most 100).",
  tags: TAGS,
  access: BOT,
  query: ChatsQuery,
  responses: { 200: { description: "chats", schema: data(z.array(ChatView)) } },
  async handler({ deps, query, principal }) {
    const res = await deps.services.conversations.ListChats({
      tenant_id: keyPrincipal(principal).tenantId,
      limit: query.limit ?? 100,
      bot_id: query.bot_id ?? "",
    });
    return { status: 200, body: { data: res.chats.map(chatView) } };
  },
});

export const postChatAction = defineRoute<EdgeDeps, ChatParams, Record<string, never>, ActionRequest>({
  method: "post",
  path: "/v1/apps/bot/chats/:chatId/actions",
  summary: "A chat action: typing or read signals for the widget, or `end` (ends the chat's widget sessions at once).",
  tags: TAGS,
  access: BOT,
  params: ChatParams,
  body: ActionRequest,
  responses: { 202: { description: "recorded on the widget feed", schema: data(ActionView) }, 404: { description: "no such chat of this tenant" } },
  async handler({ deps, params, body, principal }) {
    const res = await deps.services.conversations.ChatAction({
      tenant_id: keyPrincipal(principal).tenantId,
      chat_id: params.chatId,
      action: body.action,
      author: "bot",
    });
    return { status: 202, body: { data: res } };
  },
});
