import {
  DELIVERY_DUE,
  DeliveryLoop,
  MAX_DELIVERY_ATTEMPTS,
  type AttemptRecord,
  type DeliveryClaim,
  type DeliveryStore,
  type EgressPolicy,
  type Outgoing,
  type Skip,
} from "@gateway/outbound";
import type { Logger } from "@gateway/logger";
import type { Keyring } from "@gateway/secrets";
import type { MessagingContext } from "../../db.js";
import { openWebhookSecret } from "./register.js";
import { encodeCursor } from "@gateway/contract";

export type DispatcherOptions = {
  ctx: MessagingContext & { keyring: Keyring };
  logger: Logger;
  policy: EgressPolicy;
  /** First retry delay; doubles per failed attempt, with jitter. */
  baseDelayMs: number;
  timeoutMs: number;
  maxAttempts?: number;
  pollMs?: number;
  /** While polls find nothing, their interval doubles up to this (retries wake it when due). Default `pollMs`. */
  maxPollMs?: number;
  batchSize?: number;
  random?: () => number;
};

/** A claimed `webhook_deliveries` row; `attempts` as stored (the claim does not count the attempt, the record does). */
type WebhookClaim = DeliveryClaim & { attempts: number; tenantId: string; webhookId: string; eventId: string; replay: boolean };

/**
 * The `webhook_deliveries` table as the delivery loop sees it. A claim pushes
 * the row's next attempt past the lease (a replica that dies mid-call leaves it
 * to be claimed again once the lease has passed, the attempt not counted); the
 * record counts the attempt and emits `conversation.webhook_attempted` in the
 * same transaction. A delivery whose webhook was revoked or whose event is gone
 * is canceled.
 */
function webhookStore(ctx: DispatcherOptions["ctx"], logger: Logger): DeliveryStore<WebhookClaim> {
  return {
    async claim({ limit, leaseMs }) {
      const rows = await ctx.prisma.$queryRawUnsafe<
        { id: string; tenant_id: string; webhook_id: string; event_id: string; attempts: number; replay: boolean }[]
      >(
        `UPDATE webhook_deliveries SET next_attempt_at = now() + ($1::int * interval '1 millisecond'), updated_at = now()
         WHERE id IN (
           SELECT id FROM webhook_deliveries WHERE state = 'pending' AND next_attempt_at <= ${DELIVERY_DUE}
           ORDER BY next_attempt_at LIMIT $2 FOR UPDATE SKIP LOCKED
         )
         RETURNING id, tenant_id, webhook_id, event_id, attempts, replay`,
        leaseMs,
        limit,
      );
      return rows.map((r) => ({
        id: r.id,
        attempt: r.attempts + 1,
        attempts: r.attempts,
        tenantId: r.tenant_id,
        webhookId: r.webhook_id,
        eventId: r.event_id,
        replay: r.replay,
      }));
    },

    async prepare(row): Promise<Outgoing | Skip> {
      const [webhook, event] = await Promise.all([
        ctx.prisma.conversationWebhook.findUnique({ where: { id: row.webhookId } }),
        ctx.prisma.feedEvent.findUnique({ where: { id: row.eventId } }),
      ]);
      if (webhook?.status !== "active" || !event) return { skip: "canceled", error: null };
      let secret: string;
      try {
        secret = openWebhookSecret(ctx, webhook);
      } catch (err) {
        // A secret that does not open is the operator's to fix (ENCRYPTION_KEYS): a failed attempt, retried.
        logger.error({ err: (err as Error).name, webhook_id: webhook.id }, "webhook secret could not be opened");
        return { skip: "failed", error: "secret_unavailable" };
      }
      const body = JSON.stringify({
        event: event.type,
        event_id: event.id,
        cursor: encodeCursor(event.position),
        conversation_id: event.conversationId,
        chat_id: event.chatId,
        data: event.data,
        occurred_at: event.createdAt.toISOString(),
        replay: row.replay,
        sent_at: new Date().toISOString(),
      });
      return { url: webhook.url, body, secret, eventId: event.id };
    },

    async record(row, o: AttemptRecord) {
      if (o.state === "canceled") {
        await ctx.prisma.webhookDelivery.updateMany({ where: { id: row.id, state: "pending" }, data: { state: "canceled" } });
        return;
      }
      const state = o.state; // narrowed: delivered, pending or exhausted
      await ctx.transact(async (tx, emit) => {
        const changed = await tx.webhookDelivery.updateMany({
          where: { id: row.id, state: "pending", attempts: row.attempts },
          data: { attempts: o.attempt, state, lastStatus: o.status, lastError: o.error, nextAttemptAt: o.nextAttemptAt },
        });
        if (changed.count > 0) {
          await emit("conversation.webhook_attempted", {
            tenant_id: row.tenantId,
            webhook_id: row.webhookId,
            delivery_id: row.id,
            event_id: row.eventId,
            attempt: o.attempt,
            status: o.status,
            state,
          });
        }
      });
      logger.debug({ delivery_id: row.id, webhook_id: row.webhookId, attempt: o.attempt, state: o.state, status: o.status }, "webhook attempt");
    },
  };
}

/**
 * Sends queued conversation webhook deliveries on the one delivery loop
 * (docs/decisions/0203): the queue is the `webhook_deliveries` table, so it
 * survives restarts, and SKIP LOCKED lets several replicas share the work.
 * Delivered on a 2xx, retried with backoff and jitter, exhausted after 8 attempts.
 */
export function createWebhookDispatcher(options: DispatcherOptions): DeliveryLoop<WebhookClaim> {
  return new DeliveryLoop({
    store: webhookStore(options.ctx, options.logger),
    policy: options.policy,
    timeoutMs: options.timeoutMs,
    retry: { maxAttempts: options.maxAttempts ?? MAX_DELIVERY_ATTEMPTS, baseDelayMs: options.baseDelayMs, random: options.random },
    batchSize: options.batchSize ?? 16,
    leaseMarginMs: 30_000,
    pollMs: options.pollMs ?? 500,
    maxPollMs: options.maxPollMs,
    log: options.logger,
    name: "webhook",
  });
}
