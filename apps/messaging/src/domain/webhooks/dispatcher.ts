import { BatchLoop } from "@gateway/events";
import { backoffDelayMs, deliver, signBody, type EgressPolicy } from "@gateway/outbound";
import type { Logger } from "@gateway/logger";
import type { Keyring } from "@gateway/secrets";
import type { MessagingContext } from "../../db.js";
import { openWebhookSecret } from "./register.js";
import { encodeCursor } from "@gateway/contract-schemas";

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

type Claimed = { id: string; tenant_id: string; webhook_id: string; event_id: string; attempts: number; replay: boolean };

/**
 * Sends queued conversation webhook deliveries. The queue is the
 * `webhook_deliveries` table, so it survives restarts: a replica claims due rows
 * (SKIP LOCKED, so several replicas share the work) by pushing their next
 * attempt past the call's timeout, calls the URL, then records the attempt:
 * delivered (2xx), retried later (backoff with jitter), or exhausted after
 * `maxAttempts`. A replica that dies mid-call leaves the row to be claimed
 * again once that lease has passed.
 */
export class WebhookDispatcher {
  private readonly loop: BatchLoop;

  constructor(private readonly options: DispatcherOptions) {
    const pollMs = options.pollMs ?? 500;
    this.loop = new BatchLoop({
      round: () => this.round(),
      batchSize: options.batchSize ?? 16,
      pollMs,
      maxPollMs: Math.max(pollMs, options.maxPollMs ?? pollMs),
      lingerMs: 0,
      flushOnStop: false,
      log: options.logger,
      messages: { failed: "webhook dispatch failed; retrying", finalFlushFailed: "webhook dispatch failed" },
    });
  }

  start(): void {
    this.loop.start();
  }

  /** Work is waiting (called after a commit that queued deliveries). */
  kick(): void {
    this.loop.kick();
  }

  async stop(): Promise<void> {
    await this.loop.stop();
  }

  /** Claims the due deliveries and attempts them; returns how many it claimed. */
  private async round(): Promise<number> {
    const rows = await this.claim();
    await Promise.all(
      rows.map((row) => this.send(row).catch((err: unknown) => this.options.logger.warn({ err, delivery_id: row.id }, "webhook attempt not recorded"))),
    );
    return rows.length;
  }

  private claim(): Promise<Claimed[]> {
    const leaseMs = this.options.timeoutMs + 30_000;
    return this.options.ctx.prisma.$queryRawUnsafe<Claimed[]>(
      `UPDATE webhook_deliveries SET next_attempt_at = now() + ($1::int * interval '1 millisecond'), updated_at = now()
       WHERE id IN (
         SELECT id FROM webhook_deliveries WHERE state = 'pending' AND next_attempt_at <= now()
         ORDER BY next_attempt_at LIMIT $2 FOR UPDATE SKIP LOCKED
       )
       RETURNING id, tenant_id, webhook_id, event_id, attempts, replay`,
      leaseMs,
      this.options.batchSize ?? 16,
    );
  }

  private async send(row: Claimed): Promise<void> {
    const { ctx, logger } = this.options;
    const [webhook, event] = await Promise.all([
      ctx.prisma.conversationWebhook.findUnique({ where: { id: row.webhook_id } }),
      ctx.prisma.feedEvent.findUnique({ where: { id: row.event_id } }),
    ]);
    if (webhook?.status !== "active" || !event) {
      await ctx.prisma.webhookDelivery.updateMany({ where: { id: row.id, state: "pending" }, data: { state: "canceled" } });
      return;
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
    let result: { ok: boolean; status: number | null; error: string | null };
    try {
      const secret = openWebhookSecret(ctx, webhook);
      result = await deliver(webhook.url, {
        method: "POST",
        body,
        headers: { "content-type": "application/json", "X-Service-Signature": signBody(secret, body), "X-Service-Event-Id": event.id },
        timeoutMs: this.options.timeoutMs,
        policy: this.options.policy,
      });
    } catch (err) {
      // deliver never throws; a secret that does not open is the operator's to fix (ENCRYPTION_KEYS).
      logger.error({ err: (err as Error).name, webhook_id: webhook.id }, "webhook secret could not be opened");
      result = { ok: false, status: null, error: "secret_unavailable" };
    }
    const attempt = row.attempts + 1;
    const max = this.options.maxAttempts ?? 8;
    const state = result.ok ? "delivered" : attempt >= max ? "exhausted" : "pending";
    const next = state === "pending" ? new Date(Date.now() + backoffDelayMs(attempt, this.options.baseDelayMs, this.options.random)) : new Date();
    await ctx.transact(async (tx, emit) => {
      const changed = await tx.webhookDelivery.updateMany({
        where: { id: row.id, state: "pending", attempts: row.attempts },
        data: {
          attempts: attempt,
          state,
          lastStatus: result.status,
          lastError: result.ok ? null : (result.error ?? `http_${result.status}`),
          nextAttemptAt: next,
        },
      });
      if (changed.count > 0) {
        await emit("conversation.webhook_attempted", {
          tenant_id: row.tenant_id,
          webhook_id: row.webhook_id,
          delivery_id: row.id,
          event_id: row.event_id,
          attempt,
          status: result.status,
          state,
        });
      }
    });
    if (state === "pending") this.loop.wakeBy(next.getTime());
    logger.debug({ delivery_id: row.id, webhook_id: row.webhook_id, attempt, state, status: result.status }, "webhook attempt");
  }
}
