import { BatchLoop } from "@gateway/events-runtime";
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

/**
 * The recovery's schedule, on the loop every relay and delivery queue of the gateway runs
 * on (`BatchLoop`, the engine of `DeliveryLoop`; docs/decisions/0203, 0225): a look when the
 * oldest message still `sending` becomes interrupted (`nextAt`, announced with `wakeBy`),
 * never sooner than `intervalMs` after the previous look, `afterMs` apart while none is
 * sending; a look that fails backs off as every loop's does. Nothing here is re-sent
 * (decision 0110), so it claims no delivery and posts nothing: it only settles.
 */
export function pushRecoveryLoop(ctx: AppContext, options: { afterMs: number; intervalMs: number }): BatchLoop {
  const loop: BatchLoop = new BatchLoop({
    round: async () => {
      const { settled, nextAt } = await recoverPushMessages({ ctx, input: { olderThanMs: options.afterMs } });
      loop.wakeBy(Math.max(Date.now() + options.intervalMs, nextAt));
      return settled;
    },
    // Rounds are spaced by `wakeBy` alone: no second look at once, whatever a look settled.
    batchSize: Number.POSITIVE_INFINITY,
    pollMs: Math.max(options.afterMs, options.intervalMs),
    lingerMs: 0,
    flushOnStop: false,
    log: ctx.logger.child({ component: "push-recovery" }),
    messages: { failed: "push recovery failed; retrying", finalFlushFailed: "push recovery failed" },
  });
  return loop;
}
