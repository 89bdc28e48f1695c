import type { AppContext } from "../../app-context.js";
import { settlePush } from "./settle.js";

/**
 * Push messages a crash (or a ledger outage) left `sending`, untouched for
 * `olderThanMs`: each is settled from what was recorded (targets without an
 * outcome count as not delivered and are not charged). Returns how many were settled.
 */
export async function recoverPushMessages({ ctx, input }: { ctx: AppContext; input: { olderThanMs: number; limit?: number } }): Promise<number> {
  const stale = await ctx.prisma.pushMessage.findMany({
    where: { status: "sending", updatedAt: { lt: new Date(Date.now() - input.olderThanMs) } },
    select: { id: true },
    orderBy: { updatedAt: "asc" },
    take: input.limit ?? 50,
  });
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
  return settled;
}
