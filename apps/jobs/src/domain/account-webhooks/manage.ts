import { z } from "zod";
import { AppError, parseInput } from "@gateway/errors";
import { Id, newestFirst, pageInput, type Page } from "@gateway/contract";
import { newId } from "@gateway/contract/ids";
import type { JobsContext } from "../context.js";
import type { AccountWebhook, AccountWebhookDelivery } from "../../generated/prisma/client.js";
import { queueNotices } from "./notices.js";

export const ListAccountWebhooksInput = z.object({ tenant_id: Id, ...pageInput(200, 100) });
export type ListAccountWebhooksInput = z.input<typeof ListAccountWebhooksInput>;

/** The tenant's webhooks, newest first, a page at a time; limit 0 means 100. */
export async function listAccountWebhooks({
  ctx,
  input,
}: {
  ctx: Pick<JobsContext, "prisma">;
  input: ListAccountWebhooksInput;
}): Promise<Page<AccountWebhook>> {
  const q = parseInput(ListAccountWebhooksInput, input);
  return newestFirst((args) => ctx.prisma.accountWebhook.findMany(args), { tenantId: q.tenant_id }, q);
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
export type ListDeliveriesInput = z.input<typeof ListDeliveriesInput>;

/** A webhook's deliveries, newest first, a page at a time; limit 0 means the latest 100. */
export async function listAccountWebhookDeliveries({
  ctx,
  input,
}: {
  ctx: Pick<JobsContext, "prisma">;
  input: ListDeliveriesInput;
}): Promise<Page<AccountWebhookDelivery>> {
  const q = parseInput(ListDeliveriesInput, input);
  await ownWebhook(ctx, q.tenant_id, q.webhook_id);
  return newestFirst((args) => ctx.prisma.accountWebhookDelivery.findMany(args), { webhookId: q.webhook_id }, q);
}
