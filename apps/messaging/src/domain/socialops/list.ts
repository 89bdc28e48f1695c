import { z } from "zod";
import { Id, newestFirst, pageInput, pageOf, pageStart, type Page } from "@gateway/contract";
import { AppError, parseInput } from "@gateway/errors";
import type { MessagingContext } from "../../db.js";
import type { SocialMessage, SocialThread } from "../../generated/prisma/client.js";

/** The tenant's socialops instance by alias (disabled ones stay readable); 404 for none or another tenant's. */
async function instanceOf(ctx: MessagingContext, tenantId: string, alias: string) {
  const row = await ctx.prisma.appInstance.findUnique({ where: { tenantId_serviceId_alias: { tenantId, serviceId: "socialops", alias } } });
  if (!row) throw new AppError("not_found", `No socialops instance ${alias}.`);
  return row;
}

export const ListSocialThreadsInput = z.object({ tenant_id: Id, alias: Id, ...pageInput(200, 100), paged: z.boolean().default(false) });

/**
 * Threads with their unread counts: newest activity first (the inbox), or, paged,
 * newest first by creation (docs/decisions/0212): new activity reorders the inbox
 * but never moves a thread from one page to another, so paging neither skips nor
 * repeats one.
 */
export async function listSocialThreads({ ctx, input }: { ctx: MessagingContext; input: z.input<typeof ListSocialThreadsInput> }): Promise<Page<SocialThread>> {
  const q = parseInput(ListSocialThreadsInput, input);
  const instance = await instanceOf(ctx, q.tenant_id, q.alias);
  const where = { instanceId: instance.id, tenantId: q.tenant_id };
  if (!q.paged) {
    const rows = await ctx.prisma.socialThread.findMany({ where, orderBy: [{ lastActivityAt: "desc" }, { id: "desc" }], take: q.limit });
    return { items: rows, nextCursor: "" };
  }
  return newestFirst((args) => ctx.prisma.socialThread.findMany(args), where, q);
}

export const ListSocialMessagesInput = z.object({ tenant_id: Id, alias: Id, thread_id: Id, ...pageInput(500, 200) });

/** A thread's messages, oldest first (inbound events and replies with their delivery state), a page at a time. */
export async function listSocialMessages({
  ctx,
  input,
}: {
  ctx: MessagingContext;
  input: z.input<typeof ListSocialMessagesInput>;
}): Promise<Page<SocialMessage>> {
  const q = parseInput(ListSocialMessagesInput, input);
  const instance = await instanceOf(ctx, q.tenant_id, q.alias);
  const thread = await ctx.prisma.socialThread.findFirst({ where: { id: q.thread_id, instanceId: instance.id, tenantId: q.tenant_id }, select: { id: true } });
  if (!thread) throw new AppError("not_found", `No thread ${q.thread_id} in ${q.alias}.`);
  const after = pageStart(q.cursor);
  const rows = await ctx.prisma.socialMessage.findMany({
    where: { threadId: thread.id, ...(after !== null ? { seq: { gt: after } } : {}) },
    orderBy: { seq: "asc" },
    take: q.limit + 1,
  });
  return pageOf(rows, q.limit, (m) => m.seq);
}
