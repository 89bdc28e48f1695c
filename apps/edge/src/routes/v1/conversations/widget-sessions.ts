import { z } from "zod";
import type { EdgeDeps } from "../../../deps.js";
import { keyPrincipal } from "../../../http/access.js";
import { defineRoute } from "../../../http/route.js";
import { WidgetGrantView } from "../bot/widget.types.js";
import { data } from "../../page.js";
import { orNull } from "../../page.js";
import { grantView } from "../bot/widget.js";
import { ConversationParams } from "./conversations.types.js";
import { notFound, READ, TAGS, WRITE } from "./hub-access.js";
import { WidgetSessionRequest, WidgetSessionsQuery, WidgetSessionView } from "./widget-sessions.types.js";

export const postWidgetSession = defineRoute<EdgeDeps, ConversationParams, Record<string, never>, WidgetSessionRequest>({
  method: "post",
  path: "/v1/conversations/:id/widget-session",
  summary: "Open a widget session in a conversation: the visitor's chat becomes its channel and the visitor a participant.",
  tags: TAGS,
  access: WRITE,
  params: ConversationParams,
  body: WidgetSessionRequest,
  responses: {
    201: { description: "session opened", schema: data(WidgetGrantView) },
    404: notFound,
    409: { description: "the visitor's chat belongs to another conversation" },
  },
  async handler({ deps, params, body, principal }) {
    const grant = await deps.services.conversations.CreateWidgetSession({
      tenant_id: keyPrincipal(principal).tenantId,
      visitor_id: body.visitor_id,
      display_name: body.display_name ?? "",
      bot_id: "",
      conversation_id: params.id,
    });
    return { status: 201, body: { data: grantView(deps, grant) } };
  },
});

export const getWidgetSessions = defineRoute<EdgeDeps, ConversationParams, WidgetSessionsQuery>({
  method: "get",
  path: "/v1/conversations/:id/widget-sessions",
  summary: "The widget sessions opened in a conversation, newest first, live and ended (no tokens).",
  tags: TAGS,
  access: READ,
  params: ConversationParams,
  query: WidgetSessionsQuery,
  responses: {
    200: { description: "sessions, newest first", schema: data(z.array(WidgetSessionView)) },
    404: notFound,
  },
  async handler({ deps, params, query, principal }) {
    const res = await deps.services.conversations.ListWidgetSessions({
      tenant_id: keyPrincipal(principal).tenantId,
      conversation_id: params.id,
      limit: query.limit ?? 50,
    });
    const sessions = res.sessions.map((s) => ({
      id: s.id,
      chat_id: s.chat_id,
      visitor_id: s.visitor_id,
      display_name: orNull(s.display_name),
      status: s.revoked ? ("ended" as const) : ("live" as const),
      ended_at: orNull(s.revoked_at),
      ended_reason: orNull(s.revoked_reason) as "revoked" | "refresh_reuse" | "chat_ended" | null,
      created_at: s.created_at,
    }));
    return { status: 200, body: { data: sessions } };
  },
});
