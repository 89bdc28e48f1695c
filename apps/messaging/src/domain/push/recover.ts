import type { AppContext } from "../app-context.js";
import { settlePush } from "./settle.js";

export type RecoverPushMessagesResult = {
  /** How many interrupted messages were settled. */
  settled: number;
  /**
   * When (epoch ms) the next look is due: when the oldest message still `sending` becomes
   * interrupted, now when some are left to settle (a full page, a settlement that failed),
   * and `olderThanMs` from now when nothing is sending (a message sent after this look
   * cannot be interrupted before then).
   */
  nextAt: number;
};

/**
 * Push messages a crash (or a ledger outage) left `sending`, untouched for
 * `olderThanMs`: each is settled from what was recorded (targets without an
 * outcome count as not delivered and are not charged). One read of the messages still
 * sending, oldest first (index on status, updated_at): the interrupted ones come first,
 * the first one that is not tells when to look again.
 */
export async function recoverPushMessages({
  ctx,
  input,
}: {
  ctx: AppContext;
  input: { olderThanMs: number; limit?: number };
}): Promise<RecoverPushMessagesResult> {
  const limit = input.limit ?? 50;
  const now = Date.now();
  const sending = await ctx.prisma.pushMessage.findMany({
    where: { status: "sending" },
    select: { id: true, updatedAt: true },
    orderBy: { updatedAt: "asc" },
    take: limit,
  });
  const stale = sending.filter((m) => m.updatedAt.getTime() < now - input.olderThanMs);
  let settled = 0;
  for (const { id } of stale) {
    try {
      await settlePush(ctx, id, { interrupted: true });
      settled++;
      ctx.logger.info({ message_id: id }, "interrupted push message settled");
    } catch (err) {
      ctx.logger.warn({ err, message_id: id }, "interrupted push message not settled yet; will retry");
    }
  }
  const next = sending[stale.length];
  const nextAt = settled < stale.length || stale.length === limit ? now : next ? next.updatedAt.getTime() + input.olderThanMs : now + input.olderThanMs;
  return { settled, nextAt };
}
