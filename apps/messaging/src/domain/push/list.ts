import { z } from "zod";
import { Id, listLimit } from "@gateway/contract";
import { AppError, parseInput } from "@gateway/errors";
import type { MessagingContext } from "../../db.js";
import type { PushDelivery, PushMessage } from "../../generated/prisma/client.js";

export const ListPushMessagesInput = z.object({
  tenant_id: Id,
  alias: Id,
  limit: listLimit(100, 50),
  before: z.union([Id, z.literal("")]),
});

export type PushMessageWithDeliveries = PushMessage & { deliveries: PushDelivery[] };

/**
 * The delivery log of a webhook-push instance: its messages, newest first, each with its
 * targets' outcomes in target order. Disabled instances stay readable; another tenant's is 404.
 */
export async function listPushMessages({
  ctx,
  input,
}: {
  ctx: MessagingContext;
  input: z.input<typeof ListPushMessagesInput>;
}): Promise<PushMessageWithDeliveries[]> {
  const q = parseInput(ListPushMessagesInput, input);
  const instance = await ctx.prisma.appInstance.findUnique({
    where: { tenantId_serviceId_alias: { tenantId: q.tenant_id, serviceId: "webhook-push", alias: q.alias } },
  });
  if (!instance) throw new AppError("not_found", `No webhook-push instance ${q.alias}.`);
  let after = {};
  if (q.before) {
    const from = await ctx.prisma.pushMessage.findFirst({
      where: { id: q.before, instanceId: instance.id, tenantId: q.tenant_id },
      select: { id: true, createdAt: true },
    });
    if (!from) throw new AppError("invalid_request", "before is not a message of this instance.");
    after = { OR: [{ createdAt: { lt: from.createdAt } }, { createdAt: from.createdAt, id: { lt: from.id } }] };
  }
  return ctx.prisma.pushMessage.findMany({
    where: { instanceId: instance.id, tenantId: q.tenant_id, ...after },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    take: q.limit,
    include: { deliveries: { orderBy: { position: "asc" } } },
  });
}
