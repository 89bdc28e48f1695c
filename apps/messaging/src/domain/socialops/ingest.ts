import { z } from "zod";
import { Id } from "@gateway/contract";
import { AppError, parseInput } from "@gateway/errors";
import { newId } from "@gateway/contract/ids";
import type { AppContext } from "../app-context.js";
import { activeInstance } from "../instances/list.js";
import { SOCIALOPS_PROVIDERS } from "./providers.js";

export const IngestSocialEventInput = z.object({
  tenant_id: Id,
  alias: Id,
  provider: z.string(),
  event_id: z.string().min(1).max(256),
  thread_id: z.string().min(1).max(256),
  subject: z.string().max(512),
  text: z.string().min(1).max(16_384),
  author: z.string().min(1).max(256).nullable(),
});

export type Ingested = { threadId: string; messageId: string; duplicate: boolean };

/**
 * Stores an inbound event exactly once per (instance, provider, event_id): the
 * unique index decides between concurrent duplicates (the insert of the second
 * waits for the first to commit and then inserts nothing), and every duplicate
 * answers with the ids of the stored message. The thread is created on its
 * first event; each new message adds one to its unread count and moves its
 * last activity.
 */
export async function ingestSocialEvent({ ctx, input }: { ctx: AppContext; input: z.input<typeof IngestSocialEventInput> }): Promise<Ingested> {
  const q = parseInput(IngestSocialEventInput, input);
  if (!SOCIALOPS_PROVIDERS.some((p) => p.id === q.provider)) throw new AppError("not_found", `Unknown SocialOps provider ${q.provider}.`);
  const instance = await activeInstance(ctx, q.tenant_id, "socialops", q.alias);
  return ctx.transact(async (tx, emit) => {
    const now = new Date();
    const [thread] = await tx.$queryRawUnsafe<{ id: string }[]>(
      `INSERT INTO social_threads (id, tenant_id, instance_id, provider, external_thread_id, subject, last_activity_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7)
       ON CONFLICT (instance_id, provider, external_thread_id) DO UPDATE SET external_thread_id = EXCLUDED.external_thread_id
       RETURNING id`,
      newId("thr"),
      q.tenant_id,
      instance.id,
      q.provider,
      q.thread_id,
      q.subject,
      now,
    );
    const messageId = newId("smsg");
    const inserted = await tx.$queryRawUnsafe<{ id: string }[]>(
      `INSERT INTO social_messages (id, tenant_id, instance_id, thread_id, provider, direction, event_id, author, text, created_at)
       VALUES ($1, $2, $3, $4, $5, 'inbound', $6, $7, $8, $9)
       ON CONFLICT (instance_id, provider, event_id) DO NOTHING
       RETURNING id`,
      messageId,
      q.tenant_id,
      instance.id,
      thread!.id,
      q.provider,
      q.event_id,
      q.author,
      q.text,
      now,
    );
    if (inserted.length === 0) {
      const stored = await tx.socialMessage.findUniqueOrThrow({
        where: { instanceId_provider_eventId: { instanceId: instance.id, provider: q.provider, eventId: q.event_id } },
        select: { id: true, threadId: true },
      });
      return { threadId: stored.threadId, messageId: stored.id, duplicate: true };
    }
    await tx.socialThread.update({
      where: { id: thread!.id },
      data: { unreadCount: { increment: 1 }, messageCount: { increment: 1 }, lastActivityAt: now },
    });
    await emit("socialops.message_received", {
      tenant_id: q.tenant_id,
      instance_id: instance.id,
      provider: q.provider,
      event_id: q.event_id,
      thread_id: thread!.id,
      message_id: messageId,
    });
    return { threadId: thread!.id, messageId, duplicate: false };
  });
}
