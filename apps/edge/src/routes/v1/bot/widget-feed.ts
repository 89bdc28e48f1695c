import { z } from "zod";
import { widgetPrincipal } from "../../../http/access.js";
import { data, pageArgs } from "../../page.js";
import { created, forward, ok } from "../../forward.js";
import { WIDGET_TAGS, WIDGET_TOKEN } from "./bot-access.js";
import { eventsPage, messageView } from "./encode.js";
import { EventsPage, EventsQuery } from "./events.types.js";
import { MessagesQuery, MessageView } from "./messages.types.js";
import { WidgetMessageRequest } from "./widget-feed.types.js";

export const getWidgetEvents = forward({ tags: WIDGET_TAGS, access: { kind: "widget", orApiKeyScope: "bot:events:read" } }, "get /v1/apps/bot/widget/events", {
  summary:
    "Widget events after a cursor, in commit order. A widget token sees its own chat; an API key with bot:events:read sees every chat of its tenant. Paging on from next_cursor never skips or repeats an event.",
  query: EventsQuery,
  responses: { 200: ["a page of events (empty at the head; keep polling with next_cursor)", EventsPage], 400: "not a cursor of this feed" },
  call: ({ deps, query, principal, tenantId }) =>
    deps.services.conversations.ListEvents({
      tenant_id: tenantId,
      stream: "widget",
      ...pageArgs(query, 100),
      chat_id: principal.kind === "widget" ? principal.chatId : "",
    }),
  answer: (res) => ({ status: 200, body: eventsPage(res) }),
});

export const getWidgetMessages = forward(WIDGET_TOKEN, "get /v1/apps/bot/widget/messages", {
  summary: "The visitor's chat history, oldest first (widget token).",
  query: MessagesQuery,
  responses: { 200: ["messages, oldest first", data(z.array(MessageView))] },
  call: ({ deps, query, principal }) => {
    const widget = widgetPrincipal(principal);
    return deps.services.conversations.ListMessages({
      tenant_id: widget.tenantId,
      chat_id: widget.chatId,
      after: query.after ?? "",
      limit: query.limit ?? 100,
    });
  },
  answer: (res) => ok(res.messages.map(messageView)),
});

export const postWidgetMessage = forward(WIDGET_TOKEN, "post /v1/apps/bot/widget/messages", {
  summary: "The visitor writes into their chat: text, or a file id with an optional caption (widget token).",
  body: WidgetMessageRequest,
  responses: { 201: ["sent", data(MessageView)] },
  call: ({ deps, body, principal }) => {
    const { tenantId, chatId } = widgetPrincipal(principal);
    const kind = body.file_id ? "file" : "text";
    const message = { text: body.text ?? "", file_id: body.file_id ?? "", reply_to_message_id: "" };
    return deps.services.conversations.CreateMessage({ tenant_id: tenantId, chat_id: chatId, author: "visitor", kind, ...message });
  },
  answer: (r) => created(messageView(r)),
});
