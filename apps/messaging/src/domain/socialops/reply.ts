import { z } from "zod";
import { Id } from "@gateway/contract";
import { AppError, parseInput } from "@gateway/errors";
import { newId } from "@gateway/contract/ids";
import type { AppContext } from "../app-context.js";
import type { SocialMessage } from "../../generated/prisma/client.js";
import type { StoredSocialOpsConfig } from "../instances/config.js";
import { activeInstance } from "../instances/list.js";

export const QueueSocialReplyInput = z.object({ tenant_id: Id, alias: Id, thread_id: Id, text: z.string().min(1).max(16_384) });

/**
 * Queues a reply (202): the message (`queued`) and its `socialops.reply_queued`
 * event commit together, so the reply worker's durable consumer gets it even if
 * this process dies right after. Replying marks the thread read. An instance
 * without a reply target cannot deliver anything: 422 before anything is queued.
 */
export async function queueSocialReply({ ctx, input }: { ctx: AppContext; input: z.input<typeof QueueSocialReplyInput> }): Promise<SocialMessage> {
  const q = parseInput(QueueSocialReplyInput, input);
  const instance = await activeInstance(ctx, q.tenant_id, "socialops", q.alias);
  const thread = await ctx.prisma.socialThread.findFirst({ where: { id: q.thread_id, instanceId: instance.id, tenantId: q.tenant_id } });
  if (!thread) throw new AppError("not_found", `No thread ${q.thread_id} in ${q.alias}.`);
  if (thread.provider === "generic" && !(instance.config as StoredSocialOpsConfig).reply_webhook_url) {
    throw new AppError("validation_failed", `The instance ${q.alias} has no reply_webhook_url: replies have nowhere to go.`);
  }
  return ctx.transact(async (tx, emit) => {
    const now = new Date();
    const message = await tx.socialMessage.create({
      data: {
        id: newId("smsg"),
        tenantId: q.tenant_id,
        instanceId: instance.id,
        threadId: thread.id,
        provider: thread.provider,
        direction: "outbound",
        text: q.text,
        deliveryState: "queued",
        createdAt: now,
      },
    });
    await tx.socialThread.update({ where: { id: thread.id }, data: { unreadCount: 0, messageCount: { increment: 1 }, lastActivityAt: now } });
    await emit("socialops.reply_queued", { tenant_id: q.tenant_id, instance_id: instance.id, thread_id: thread.id, message_id: message.id });
    return message;
  });
}
