import type { HubEmit } from "../../db.js";
import type { WidgetSession } from "../../generated/prisma/client.js";
import type { HubContext } from "../hub-context.js";
import { issueRefreshToken, type WidgetGrant } from "./create.js";
import { hashToken } from "./tokens.js";

export type RefreshOutcome = { kind: "rotated"; grant: WidgetGrant } | { kind: "reused"; sessionId: string } | { kind: "invalid" };

/**
 * Rotates a widget refresh token. The token's row is locked, so of two
 * concurrent uses exactly one rotates; a token presented again after its use is
 * reuse: the whole session is revoked (the edge then refuses its access tokens).
 * A rotation bumps the session's generation: the access token issued with the
 * used refresh token is refused from then on, like the refresh token itself.
 */
export async function refreshWidgetSession({ ctx, input }: { ctx: HubContext; input: { refreshToken: string } }): Promise<RefreshOutcome> {
  if (!input.refreshToken.startsWith("wrt_") || input.refreshToken.length > 256) return { kind: "invalid" };
  const hash = hashToken(input.refreshToken);
  const outcome = await ctx.transact(async (tx, emit): Promise<RefreshOutcome> => {
    const rows = await tx.$queryRawUnsafe<{ session_id: string; used_at: Date | null; expires_at: Date }[]>(
      "SELECT session_id, used_at, expires_at FROM widget_refresh_tokens WHERE hash = $1 FOR UPDATE",
      hash,
    );
    const row = rows[0];
    if (!row) return { kind: "invalid" };
    const session = await tx.widgetSession.findUniqueOrThrow({ where: { id: row.session_id } });
    if (session.revokedAt) return { kind: "invalid" };
    if (row.used_at) {
      await tx.widgetSession.update({ where: { id: session.id }, data: { revokedAt: new Date(), revokedReason: "refresh_reuse" } });
      await emitRevoked(emit, session, "refresh_reuse");
      return { kind: "reused", sessionId: session.id };
    }
    if (row.expires_at.getTime() <= Date.now()) return { kind: "invalid" };
    await tx.widgetRefreshToken.update({ where: { hash }, data: { usedAt: new Date() } });
    // A new generation: the access token issued with the used refresh token stops working.
    const { generation } = await tx.widgetSession.update({ where: { id: session.id }, data: { generation: { increment: 1 } }, select: { generation: true } });
    const next = await issueRefreshToken(tx, session.id, ctx.widgetRefreshTtlSeconds);
    await emit("session.refreshed", {
      tenant_id: session.tenantId,
      session_id: session.id,
      chat_id: session.chatId,
      conversation_id: session.conversationId,
    });
    return {
      kind: "rotated",
      grant: {
        sessionId: session.id,
        chatId: session.chatId,
        tenantId: session.tenantId,
        visitorId: session.visitorId,
        conversationId: session.conversationId,
        refreshToken: next.token,
        refreshExpiresAt: next.expiresAt,
        generation,
      },
    };
  });
  if (outcome.kind === "reused") await ctx.announceRevoked([outcome.sessionId]);
  // Every edge forgets what it cached of the session, so it learns the new generation (and refuses the old access token) at once.
  if (outcome.kind === "rotated") await ctx.announceRevoked([outcome.grant.sessionId]);
  return outcome;
}

/** A session ended by a revocation or a reused refresh token (on the widget feed). */
export async function emitRevoked(emit: HubEmit, session: WidgetSession, reason: "revoked" | "refresh_reuse") {
  await emit(
    "session.revoked",
    { tenant_id: session.tenantId, session_id: session.id, chat_id: session.chatId, conversation_id: session.conversationId, reason },
    { view: { session_id: session.id, chat_id: session.chatId, reason } },
  );
}
