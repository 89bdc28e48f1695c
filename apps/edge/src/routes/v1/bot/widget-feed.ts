import { z } from "zod";
import type { EdgeDeps } from "../../../deps.js";
import { keyPrincipal, widgetPrincipal } from "../../../http/access.js";
import { defineRoute } from "../../../http/route.js";
import { data, pageArgs } from "../../page.js";
import { WIDGET, WIDGET_TAGS as TAGS } from "./bot-access.js";
import { eventsPage, messageView } from "./encode.js";
import { EventsPage, EventsQuery } from "./events.types.js";
import { MessagesQuery, MessageView } from "./messages.types.js";
import { WidgetMessageRequest } from "./widget-feed.types.js";

export const getWidgetEvents = defineRoute<EdgeDeps, Record<string, never>, EventsQuery>({
  method: "get",
  path: "/v1/apps/bot/widget/events",
  summary:
    "Widget events after a cursor, in commit order. A widget token sees its own chat; an API key with bot:events:read sees every chat of its tenant. Paging on from next_cursor never skips or repeats an event.",
  tags: TAGS,
  access: { kind: "widget", orApiKeyScope: "bot:events:read" },
  query: EventsQuery,
  responses: {
    200: { description: "a page of events (empty at the head; keep polling with next_cursor)", schema: EventsPage },
    400: { description: "not a cursor of this feed" },
  },
  async handler({ deps, query, principal }) {
    const res = await deps.services.conversations.ListEvents({
      tenant_id: principal.kind === "widget" ? principal.tenantId : keyPrincipal(principal).tenantId,
      stream: "widget",
      ...pageArgs(query, 100),
      chat_id: principal.kind === "widget" ? principal.chatId : "",
    });
    return { status: 200, body: eventsPage(res) };
  },
});

export const getWidgetMessages = defineRoute<EdgeDeps, Record<string, never>, MessagesQuery>({
  method: "get",
  path: "/v1/apps/bot/widget/messages",
  summary: "The visitor's chat history, oldest first (widget token).",
  tags: TAGS,
  access: WIDGET,
  query: MessagesQuery,
  responses: { 200: { description: "messages, oldest first", schema: data(z.array(MessageView)) } },
  async handler({ deps, query, principal }) {
    const widget = widgetPrincipal(principal);
    const res = await deps.services.conversations.ListMessages({
      tenant_id: widget.tenantId,
      chat_id: widget.chatId,
      after: query.after ?? "",
      limit: query.limit ?? 100,
    });
    return { status: 200, body: { data: res.messages.map(messageView) } };
  },
});

export const postWidgetMessage = defineRoute<EdgeDeps, Record<string, never>, Record<string, never>, WidgetMessageRequest>({
  method: "post",
  path: "/v1/apps/bot/widget/messages",
  summary: "The visitor writes into their chat: text, or a file id with an optional caption (widget token).",
  tags: TAGS,
  access: WIDGET,
  body: WidgetMessageRequest,
  responses: { 201: { description: "sent", schema: data(MessageView) } },
  async handler({ deps, body, principal }) {
    const widget = widgetPrincipal(principal);
    const message = await deps.services.conversations.CreateMessage({
      tenant_id: widget.tenantId,
      chat_id: widget.chatId,
      author: "visitor",
      kind: body.file_id ? "file" : "text",
      text: body.text ?? "",
      file_id: body.file_id ?? "",
      reply_to_message_id: "",
    });
    return { status: 201, body: { data: messageView(message) } };
  },
});
