import { AppError } from "@gateway/errors";
import { newId } from "@gateway/contract/ids";
import { openCredential, sealCredential } from "@gateway/secrets";
import { encodeCursor } from "@gateway/contract";
import { parseCursor } from "../feed/list.js";
import { streamKey } from "../feed/append.js";
import type { HubContext } from "../hub-context.js";
import { CONVERSATION_EVENT_TYPES } from "../feed/project.js";

/** The associated data of a webhook's secret: a sealed secret copied onto another webhook does not open. */
export function webhookSecretContext(webhookId: string): string {
  return `gateway.messaging.conversation_webhook.secret:${webhookId}`;
}

export function openWebhookSecret(ctx: Pick<HubContext, "keyring">, webhook: { id: string; secretCiphertext: Uint8Array; secretKeyId: string }): string {
  return openCredential(ctx.keyring, { ciphertext: webhook.secretCiphertext, keyId: webhook.secretKeyId }, webhookSecretContext(webhook.id));
}

/** Registers a webhook for the tenant's conversation events (all kinds, or the listed ones). */
export async function registerWebhook({ ctx, input }: { ctx: HubContext; input: { tenantId: string; url: string; secret: string; eventTypes: string[] } }) {
  if (input.secret.length < 16 || input.secret.length > 256) throw new AppError("invalid_request", "secret must be 16-256 characters.");
  const unknown = input.eventTypes.filter((t) => !(CONVERSATION_EVENT_TYPES as readonly string[]).includes(t));
  if (unknown.length > 0) throw new AppError("invalid_request", `unknown event types: ${unknown.join(", ")}; known: ${CONVERSATION_EVENT_TYPES.join(", ")}.`);
  const check = await ctx.checkWebhookUrl(input.url);
  if (!check.ok) throw new AppError("invalid_request", `url is not allowed: ${check.reason}.`);
  const id = newId("cwh");
  const sealed = sealCredential(ctx.keyring, input.secret, webhookSecretContext(id));
  return ctx.transact(async (tx, emit) => {
    const webhook = await tx.conversationWebhook.create({
      data: {
        id,
        tenantId: input.tenantId,
        url: input.url,
        secretCiphertext: sealed.ciphertext,
        secretKeyId: sealed.keyId,
        eventTypes: [...new Set(input.eventTypes)],
        status: "active",
      },
    });
    await emit("conversation.webhook_changed", { tenant_id: input.tenantId, webhook_id: id, change: "registered", queued: 0 });
    return webhook;
  });
}

export async function listWebhooks({ ctx, input }: { ctx: HubContext; input: { tenantId: string } }) {
  return ctx.prisma.conversationWebhook.findMany({ where: { tenantId: input.tenantId }, orderBy: [{ createdAt: "desc" }, { id: "desc" }], take: 100 });
}

async function findWebhook(ctx: HubContext, tenantId: string, id: string) {
  const webhook = await ctx.prisma.conversationWebhook.findFirst({ where: { id, tenantId } });
  if (!webhook) throw new AppError("not_found", "No such webhook.");
  return webhook;
}

/** Revokes a webhook: nothing more is sent to it, and its pending deliveries are canceled. Revoking again changes nothing. */
export async function revokeWebhook({ ctx, input }: { ctx: HubContext; input: { tenantId: string; id: string } }) {
  const webhook = await findWebhook(ctx, input.tenantId, input.id);
  if (webhook.status === "revoked") return webhook;
  return ctx.transact(async (tx, emit) => {
    const changed = await tx.conversationWebhook.updateMany({
      where: { id: webhook.id, status: "active" },
      data: { status: "revoked", revokedAt: new Date() },
    });
    if (changed.count > 0) {
      await tx.webhookDelivery.updateMany({ where: { webhookId: webhook.id, state: "pending" }, data: { state: "canceled" } });
      await emit("conversation.webhook_changed", { tenant_id: input.tenantId, webhook_id: webhook.id, change: "revoked", queued: 0 });
    }
    return tx.conversationWebhook.findUniqueOrThrow({ where: { id: webhook.id } });
  });
}

export const MAX_REPLAY = 1000;

/**
 * Delivers again the conversation events after `cursor` (the webhook's event
 * types only), at most `limit` of them; `next_cursor` continues a longer replay.
 * Replayed deliveries carry the events' original ids, so receivers dedupe.
 */
export async function replayWebhook({ ctx, input }: { ctx: HubContext; input: { tenantId: string; id: string; cursor: string; limit: number } }) {
  const after = parseCursor(input.cursor);
  const limit = Math.min(Math.max(input.limit || MAX_REPLAY, 1), MAX_REPLAY);
  const webhook = await findWebhook(ctx, input.tenantId, input.id);
  if (webhook.status !== "active") throw new AppError("conflict", "The webhook is revoked.");
  const result = await ctx.transact(async (tx, emit) => {
    const rows = await tx.$queryRawUnsafe<{ position: bigint }[]>(
      `WITH picked AS (
         SELECT id, position FROM feed_events
         WHERE stream = $1 AND position > $2 AND (cardinality($3::text[]) = 0 OR type = ANY($3::text[]))
         ORDER BY position LIMIT $4
       ), queued AS (
         INSERT INTO webhook_deliveries (id, tenant_id, webhook_id, event_id, state, replay, next_attempt_at, created_at, updated_at)
         SELECT 'whd_' || replace(gen_random_uuid()::text, '-', ''), $5, $6, id, 'pending', true, now(), now(), now() FROM picked
       )
       SELECT position FROM picked ORDER BY position`,
      streamKey("conversation", input.tenantId),
      after,
      webhook.eventTypes,
      limit,
      input.tenantId,
      webhook.id,
    );
    await emit("conversation.webhook_changed", { tenant_id: input.tenantId, webhook_id: webhook.id, change: "replayed", queued: rows.length });
    return { queued: rows.length, nextCursor: encodeCursor(rows.at(-1)?.position ?? after) };
  });
  ctx.kickWebhooks();
  return { webhookId: webhook.id, fromCursor: encodeCursor(after), ...result };
}

/** An event's cursor, or "" for a delivery whose event is gone. */
const positionCursor = (position: bigint | undefined): string => (position === undefined ? "" : encodeCursor(position));

export async function listDeliveries({ ctx, input }: { ctx: HubContext; input: { tenantId: string; webhookId: string; limit: number } }) {
  const webhook = await findWebhook(ctx, input.tenantId, input.webhookId);
  const deliveries = await ctx.prisma.webhookDelivery.findMany({
    where: { webhookId: webhook.id },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    take: Math.min(Math.max(input.limit || 100, 1), 100),
  });
  const events = await ctx.prisma.feedEvent.findMany({
    where: { id: { in: deliveries.map((d) => d.eventId) } },
    select: { id: true, type: true, position: true },
  });
  const byId = new Map(events.map((e) => [e.id, e]));
  return deliveries.map((d) => ({ delivery: d, eventType: byId.get(d.eventId)?.type ?? "", cursor: positionCursor(byId.get(d.eventId)?.position) }));
}
