import type { Logger } from "@gateway/logger";
import type { Counter } from "@gateway/metrics";
import { DELIVERY_DUE, type AttemptRecord, type DeliveryClaim, type DeliveryLoop, type DeliveryStore, type Outgoing, type Skip } from "@gateway/outbound";
import { type DispatcherOptions, signedDeliveries } from "../callbacks/signed-deliveries.js";
import { sealedIn } from "../callbacks/target.js";
import { openWebhookSecret } from "../domain/account-webhooks/secret.js";

/** A claimed `account_webhook_deliveries` row (`id` is its seq); `attempt` already counted by the claim. */
type WebhookClaim = DeliveryClaim & { webhookId: string; eventId: string; event: string; data: unknown };

export type AccountWebhookDispatcherOptions = DispatcherOptions;

/**
 * The `account_webhook_deliveries` table as the one delivery loop sees it
 * (docs/decisions/0203, 0210): a claim counts the attempt and moves the row's next
 * attempt past the lease (a crash mid-attempt still counts, never more than 8
 * sends); deliveries of different events go in parallel, no order between them.
 */
function webhookStore(options: AccountWebhookDispatcherOptions, log: Logger, attempts?: Counter): DeliveryStore<WebhookClaim> {
  const { prisma, keyring } = options;
  return {
    async claim({ limit, leaseMs }) {
      const rows = await prisma.$queryRawUnsafe<{ seq: bigint; webhook_id: string; event_id: string; event: string; data: unknown; attempts: number }[]>(
        `WITH due AS (
           SELECT seq FROM account_webhook_deliveries
           WHERE state = 'pending' AND next_attempt_at <= ${DELIVERY_DUE}
           ORDER BY next_attempt_at
           LIMIT $2
           FOR UPDATE SKIP LOCKED
         )
         UPDATE account_webhook_deliveries d
         SET attempts = d.attempts + 1, next_attempt_at = now() + make_interval(secs => $1::double precision / 1000), updated_at = now()
         FROM due WHERE d.seq = due.seq
         RETURNING d.seq, d.webhook_id, d.event_id, d.event, d.data, d.attempts`,
        leaseMs,
        limit,
      );
      return rows.map((r) => ({ id: r.seq.toString(), attempt: r.attempts, webhookId: r.webhook_id, eventId: r.event_id, event: r.event, data: r.data }));
    },

    async prepare(c): Promise<Outgoing | Skip> {
      const webhook = await prisma.accountWebhook.findUnique({ where: { id: c.webhookId } });
      if (!webhook) return { skip: "canceled", error: "webhook deleted" };
      const secret = openWebhookSecret(keyring, webhook.id, sealedIn(webhook));
      const body = JSON.stringify({ event: c.event, event_id: c.eventId, sent_at: new Date().toISOString(), data: c.data });
      return { url: webhook.url, body, secret, eventId: c.eventId, headers: { "user-agent": "gateway-webhooks/1" } };
    },

    async record(c, o: AttemptRecord) {
      // A canceled delivery's webhook is gone, and the row with it (cascade): nothing to write.
      const state = o.state === "canceled" ? "exhausted" : o.state;
      await prisma.accountWebhookDelivery.updateMany({
        where: { seq: BigInt(c.id), attempts: c.attempt },
        data: { state, lastStatus: o.status, lastError: o.error, nextAttemptAt: o.nextAttemptAt },
      });
      attempts?.inc({ state });
      log.info(
        { webhook_id: c.webhookId, event_id: c.eventId, event: c.event, attempt: c.attempt, status: o.status, error: o.error, state },
        "webhook attempted",
      );
    },
  };
}

/**
 * Delivers account webhook events on the one delivery loop: the signed POST (no
 * redirects, the callbacks' egress rules), retried after
 * `backoffDelayMs(attempt, CALLBACK_BASE_DELAY_MS)`, exhausted after the 8th attempt.
 */
export function createAccountWebhookDispatcher(options: AccountWebhookDispatcherOptions): DeliveryLoop<WebhookClaim> {
  return signedDeliveries(options, {
    component: "account-webhooks",
    name: "account webhook",
    metric: {
      name: "account_webhook_attempts_total",
      help: "Account webhook delivery attempts, by resulting state (delivered, pending = will retry, exhausted).",
    },
    store: (log, attempts) => webhookStore(options, log, attempts),
  });
}
