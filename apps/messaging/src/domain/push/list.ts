import { z } from "zod";
import { AppError, parseInput } from "@gateway/errors";
import type { MessagingContext } from "../../db.js";
import type { PushDelivery, PushMessage } from "../../generated/prisma/client.js";

const Id = z.string().regex(/^[A-Za-z0-9_-]{1,128}$/, "must be 1-128 of A-Z a-z 0-9 _ -");

export const ListPushMessagesInput = z.object({
  tenant_id: Id,
  alias: Id,
  limit: z.number().int().min(0).max(100),
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
    take: q.limit || 50,
    include: { deliveries: { orderBy: { position: "asc" } } },
  });
}
