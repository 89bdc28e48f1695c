import { z } from "zod";
import { WidgetGrantView } from "../bot/widget.types.js";
import { data, orNull } from "../../page.js";
import { created, forward, ok } from "../../forward.js";
import { grantView } from "../bot/widget.js";
import { ConversationParams } from "./conversations.types.js";
import { HUB_READ, HUB_WRITE, notFound } from "./hub-access.js";
import { WidgetSessionRequest, WidgetSessionsQuery, WidgetSessionView } from "./widget-sessions.types.js";

export const postWidgetSession = forward(HUB_WRITE, "post /v1/conversations/:id/widget-session", {
  summary: "Open a widget session in a conversation: the visitor's chat becomes its channel and the visitor a participant.",
  params: ConversationParams,
  body: WidgetSessionRequest,
  responses: { 201: ["session opened", data(WidgetGrantView)], 404: notFound, 409: "the visitor's chat belongs to another conversation" },
  call: ({ deps, params, body, tenantId }) =>
    deps.services.conversations.CreateWidgetSession({
      tenant_id: tenantId,
      visitor_id: body.visitor_id,
      display_name: body.display_name ?? "",
      bot_id: "",
      conversation_id: params.id,
    }),
  answer: (grant, { deps }) => created(grantView(deps, grant)),
});

export const getWidgetSessions = forward(HUB_READ, "get /v1/conversations/:id/widget-sessions", {
  summary: "The widget sessions opened in a conversation, newest first, live and ended (no tokens).",
  params: ConversationParams,
  query: WidgetSessionsQuery,
  responses: { 200: ["sessions, newest first", data(z.array(WidgetSessionView))], 404: notFound },
  call: ({ deps, params, query, tenantId }) =>
    deps.services.conversations.ListWidgetSessions({ tenant_id: tenantId, conversation_id: params.id, limit: query.limit ?? 50 }),
  answer: (res) =>
    ok(
      res.sessions.map((s) => ({
        id: s.id,
        chat_id: s.chat_id,
        visitor_id: s.visitor_id,
        display_name: orNull(s.display_name),
        status: s.revoked ? ("ended" as const) : ("live" as const),
        ended_at: orNull(s.revoked_at),
        ended_reason: orNull(s.revoked_reason) as "revoked" | "refresh_reuse" | "chat_ended" | null,
        created_at: s.created_at,
      })),
    ),
});
