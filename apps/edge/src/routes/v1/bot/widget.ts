import { AppError } from "@gateway/errors";
import type { messaging } from "@gateway/protos";
import type { EdgeDeps } from "../../../deps.js";
import { keyPrincipal, widgetPrincipal } from "../../../http/access.js";
import { defineRoute } from "../../../http/route.js";
import { WIDGET, WIDGET_TAGS as TAGS } from "./bot-access.js";
import { WidgetAuthRequest, WidgetGrantView, WidgetRefreshRequest, WidgetTokenView } from "./widget.types.js";
import { data, orNull } from "../../page.js";

/** A widget grant from messaging plus an access token signed here. */
export function grantView(deps: EdgeDeps, grant: messaging.WidgetSessionGrant__Output) {
  return {
    token: deps.widgets.sign({ sessionId: grant.session_id, tenantId: grant.tenant_id, chatId: grant.chat_id, generation: grant.generation }),
    refresh_token: grant.refresh_token,
    token_type: "Bearer" as const,
    expires_in: deps.widgets.tokenTtlSeconds,
    chat_id: grant.chat_id,
    session_id: grant.session_id,
    conversation_id: orNull(grant.conversation_id),
  };
}

export const postWidgetAuth = defineRoute<EdgeDeps, Record<string, never>, Record<string, never>, WidgetAuthRequest>({
  method: "post",
  path: "/v1/apps/bot/widget/auth",
  summary: "Open a widget session for a visitor (server side, with an API key): a short-lived widget token and a one-use refresh token.",
  tags: TAGS,
  access: { kind: "apiKey", scope: "bot:session:create" },
  body: WidgetAuthRequest,
  responses: { 201: { description: "session opened", schema: data(WidgetGrantView) }, 404: { description: "bot_id is not a bot of this tenant" } },
  async handler({ deps, body, principal }) {
    const grant = await deps.services.conversations.CreateWidgetSession({
      tenant_id: keyPrincipal(principal).tenantId,
      visitor_id: body.visitor_id,
      display_name: body.display_name ?? "",
      bot_id: body.bot_id ?? "",
      conversation_id: "",
    });
    return { status: 201, body: { data: grantView(deps, grant) } };
  },
});

export const postWidgetRefresh = defineRoute<EdgeDeps, Record<string, never>, Record<string, never>, WidgetRefreshRequest>({
  method: "post",
  path: "/v1/apps/bot/widget/refresh",
  summary: "Exchange a widget refresh token (no other credential) for a new pair. Each works once; reuse ends the session.",
  tags: TAGS,
  access: { kind: "public" },
  body: WidgetRefreshRequest,
  responses: { 200: { description: "rotated", schema: data(WidgetGrantView) }, 401: { description: "invalid, expired or reused" } },
  async handler({ deps, body }) {
    const res = await deps.services.conversations.RefreshWidgetSession({ refresh_token: body.refresh_token });
    if (res.outcome === "reused") {
      await deps.widgets.invalidate([res.revoked_session_id]);
      throw new AppError("unauthorized", "This refresh token was already used; the widget session has been ended.");
    }
    if (res.outcome !== "rotated" || !res.grant) throw new AppError("unauthorized", "The refresh token is invalid or expired.");
    // The previous access token stops working here at once, and on other replicas a broadcast hop away.
    await deps.widgets.invalidate([res.grant.session_id]);
    return { status: 200, body: { data: grantView(deps, res.grant) } };
  },
});

export const postWidgetRevoke = defineRoute<EdgeDeps>({
  method: "post",
  path: "/v1/apps/bot/widget/revoke",
  summary: "End the widget session of the token: its access and refresh tokens stop working at once, on every replica.",
  tags: TAGS,
  access: WIDGET,
  responses: { 204: { description: "ended" }, 401: { description: "not a live widget token" } },
  async handler({ deps, principal }) {
    const widget = widgetPrincipal(principal);
    await deps.services.conversations.RevokeWidgetSession({ tenant_id: widget.tenantId, session_id: widget.sessionId, reason: "revoked" });
    await deps.widgets.invalidate([widget.sessionId]);
    return { status: 204 };
  },
});

export const postWidgetToken = defineRoute<EdgeDeps>({
  method: "post",
  path: "/v1/apps/bot/widget/token",
  summary: "Introspect the widget token: 200 with its session, chat and expiry while it is valid, else 401 (docs/decisions/0120).",
  tags: TAGS,
  access: WIDGET,
  responses: { 200: { description: "the token is valid", schema: data(WidgetTokenView) }, 401: { description: "invalid, expired or revoked" } },
  async handler({ principal }) {
    const widget = widgetPrincipal(principal);
    return {
      status: 200,
      body: {
        data: {
          session_id: widget.sessionId,
          chat_id: widget.chatId,
          visitor_id: widget.visitorId,
          conversation_id: widget.conversationId,
          expires_at: widget.expiresAt.toISOString(),
        },
      },
    };
  },
});
