import { z } from "zod";
import type { EdgeDeps } from "../../../deps.js";
import { keyPrincipal } from "../../../http/access.js";
import { defineRoute } from "../../../http/route.js";
import { data } from "../bot/bot.types.js";
import { orNull } from "../bot/encode.js";
import { ConversationParams } from "./conversations.types.js";
import { WidgetSessionsQuery, WidgetSessionView } from "./widget-sessions.types.js";

export const getWidgetSessions = defineRoute<EdgeDeps, ConversationParams, WidgetSessionsQuery>({
  method: "get",
  path: "/v1/conversations/:id/widget-sessions",
  summary: "The widget sessions opened in a conversation, newest first, live and ended (no tokens).",
  tags: ["conversations"],
  access: { kind: "apiKey", scope: "conversation:read" },
  params: ConversationParams,
  query: WidgetSessionsQuery,
  responses: {
    200: { description: "sessions, newest first", schema: data(z.array(WidgetSessionView)) },
    404: { description: "no such conversation of this tenant" },
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
