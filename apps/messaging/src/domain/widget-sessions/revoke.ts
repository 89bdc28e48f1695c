import { AppError } from "@gateway/errors";
import type { HubContext } from "../hub-context.js";
import { emitRevoked } from "./refresh.js";

export const REVOKE_REASONS = ["revoked", "refresh_reuse", "chat_ended"] as const;

/** Ends a session at once: its refresh tokens fail here, its access tokens at every edge replica. */
export async function revokeWidgetSession({ ctx, input }: { ctx: HubContext; input: { tenantId: string; sessionId: string } }): Promise<boolean> {
  const revoked = await ctx.transact(async (tx, emit) => {
    const session = await tx.widgetSession.findFirst({ where: { id: input.sessionId, tenantId: input.tenantId } });
    if (!session) throw new AppError("not_found", "No such widget session.");
    const changed = await tx.widgetSession.updateMany({
      where: { id: session.id, revokedAt: null },
      data: { revokedAt: new Date(), revokedReason: "revoked" },
    });
    if (changed.count === 0) return false;
    await emitRevoked(emit, session, "revoked");
    return true;
  });
  await ctx.announceRevoked([input.sessionId]);
  return revoked;
}

/** A session by id (the edge checks tenant and liveness from it). */
export async function getWidgetSession({ ctx, input }: { ctx: HubContext; input: { sessionId: string } }) {
  const session = await ctx.prisma.widgetSession.findUnique({ where: { id: input.sessionId } });
  if (!session) throw new AppError("not_found", "No such widget session.");
  return session;
}
