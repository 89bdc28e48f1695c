import { z } from "zod";
import { Id, listLimit } from "@gateway/contract-schemas";
import { AppError, parseInput } from "@gateway/errors";
import type { MessagingContext } from "../../db.js";
import type { SocialMessage, SocialThread } from "../../generated/prisma/client.js";

/** The tenant's socialops instance by alias (disabled ones stay readable); 404 for none or another tenant's. */
async function instanceOf(ctx: MessagingContext, tenantId: string, alias: string) {
  const row = await ctx.prisma.appInstance.findUnique({ where: { tenantId_serviceId_alias: { tenantId, serviceId: "socialops", alias } } });
  if (!row) throw new AppError("not_found", `No socialops instance ${alias}.`);
  return row;
}

export const ListSocialThreadsInput = z.object({ tenant_id: Id, alias: Id, limit: listLimit(200, 100) });

/** Threads, newest activity first, with their unread counts. */
export async function listSocialThreads({ ctx, input }: { ctx: MessagingContext; input: z.input<typeof ListSocialThreadsInput> }): Promise<SocialThread[]> {
  const q = parseInput(ListSocialThreadsInput, input);
  const instance = await instanceOf(ctx, q.tenant_id, q.alias);
  return ctx.prisma.socialThread.findMany({
    where: { instanceId: instance.id, tenantId: q.tenant_id },
    orderBy: [{ lastActivityAt: "desc" }, { id: "desc" }],
    take: q.limit,
  });
}

export const ListSocialMessagesInput = z.object({ tenant_id: Id, alias: Id, thread_id: Id, limit: listLimit(500, 200) });

/** A thread's messages, oldest first (inbound events and replies with their delivery state). */
export async function listSocialMessages({ ctx, input }: { ctx: MessagingContext; input: z.input<typeof ListSocialMessagesInput> }): Promise<SocialMessage[]> {
  const q = parseInput(ListSocialMessagesInput, input);
  const instance = await instanceOf(ctx, q.tenant_id, q.alias);
  const thread = await ctx.prisma.socialThread.findFirst({ where: { id: q.thread_id, instanceId: instance.id, tenantId: q.tenant_id }, select: { id: true } });
  if (!thread) throw new AppError("not_found", `No thread ${q.thread_id} in ${q.alias}.`);
  return ctx.prisma.socialMessage.findMany({ where: { threadId: thread.id }, orderBy: [{ createdAt: "asc" }, { id: "asc" }], take: q.limit });
}
