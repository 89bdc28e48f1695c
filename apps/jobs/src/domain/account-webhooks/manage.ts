import { z } from "zod";
import { AppError, parseInput } from "@gateway/errors";
import { Id, pageInput, pageOf, pageStart, type Page } from "@gateway/contract";
import { newId } from "@gateway/contract/ids";
import type { JobsContext } from "../context.js";
import type { AccountWebhook, AccountWebhookDelivery } from "../../generated/prisma/client.js";
import { queueNotices } from "./notices.js";

export const ListAccountWebhooksInput = z.object({ tenant_id: Id, ...pageInput(200, 100) });

/** The tenant's webhooks, newest first, a page at a time; limit 0 means 100. */
export async function listAccountWebhooks({
  ctx,
  input,
}: {
  ctx: Pick<JobsContext, "prisma">;
  input: z.input<typeof ListAccountWebhooksInput>;
}): Promise<Page<AccountWebhook>> {
  const q = parseInput(ListAccountWebhooksInput, input);
  const after = pageStart(q.cursor);
  const rows = await ctx.prisma.accountWebhook.findMany({
    where: { tenantId: q.tenant_id, ...(after !== null ? { seq: { lt: after } } : {}) },
    orderBy: { seq: "desc" },
    take: q.limit + 1,
  });
  return pageOf(rows, q.limit, (w) => w.seq);
}

export const AccountWebhookRef = z.object({ tenant_id: Id, id: Id, actor: z.string().default("") });

/** Another tenant's webhook is as absent as one that does not exist. */
async function ownWebhook(ctx: Pick<JobsContext, "prisma">, tenantId: string, id: string): Promise<AccountWebhook> {
  const webhook = await ctx.prisma.accountWebhook.findUnique({ where: { id } });
  if (!webhook || webhook.tenantId !== tenantId) throw new AppError("not_found", "No such webhook.");
  return webhook;
}

/** Removes the webhook and its deliveries (one in flight is recorded nowhere and not retried). */
export async function deleteAccountWebhook({ ctx, input }: { ctx: JobsContext; input: z.input<typeof AccountWebhookRef> }): Promise<void> {
  const q = parseInput(AccountWebhookRef, input);
  await ctx.transact(async (tx, emit) => {
    const gone = await tx.accountWebhook.deleteMany({ where: { id: q.id, tenantId: q.tenant_id } });
    if (gone.count === 0) throw new AppError("not_found", "No such webhook.");
    await emit("account.webhook_deleted", { tenant_id: q.tenant_id, webhook_id: q.id, actor: q.actor || null });
  });
}

/** Queues a `ping` event to this webhook alone; answers its event id. */
export async function testAccountWebhook({ ctx, input }: { ctx: JobsContext; input: z.input<typeof AccountWebhookRef> }): Promise<string> {
  const q = parseInput(AccountWebhookRef, input);
  const webhook = await ownWebhook(ctx, q.tenant_id, q.id);
  const eventId = newId("evt");
  await queueNotices(ctx.prisma, [{ tenantId: q.tenant_id, eventId, event: "ping", data: { webhook_id: webhook.id }, webhookId: webhook.id }]);
  ctx.accounts.kickDeliveries();
  return eventId;
}

export const ListDeliveriesInput = z.object({ tenant_id: Id, webhook_id: Id, ...pageInput(200, 100) });

/** A webhook's deliveries, newest first, a page at a time; limit 0 means the latest 100. */
export async function listAccountWebhookDeliveries({
  ctx,
  input,
}: {
  ctx: Pick<JobsContext, "prisma">;
  input: z.input<typeof ListDeliveriesInput>;
}): Promise<Page<AccountWebhookDelivery>> {
  const q = parseInput(ListDeliveriesInput, input);
  await ownWebhook(ctx, q.tenant_id, q.webhook_id);
  const after = pageStart(q.cursor);
  const rows = await ctx.prisma.accountWebhookDelivery.findMany({
    where: { webhookId: q.webhook_id, ...(after !== null ? { seq: { lt: after } } : {}) },
    orderBy: { seq: "desc" },
    take: q.limit + 1,
  });
  return pageOf(rows, q.limit, (d) => d.seq);
}
