import type { Logger } from "@gateway/logger";
import type { Counter } from "@gateway/metrics";
import { DELIVERY_DUE, type AttemptRecord, type DeliveryClaim, type DeliveryLoop, type DeliveryStore, type Outgoing, type Skip } from "@gateway/outbound";
import { openCallbackSecret, sealedIn } from "./target.js";
import { type DispatcherOptions, signedDeliveries } from "./signed-deliveries.js";

export type { DispatcherOptions };

/** A claimed `job_callback_deliveries` row; `attempt` is its `attempts`, already counted by the claim. */
type CallbackClaim = DeliveryClaim & { jobId: string; job: unknown };

/**
 * The `job_callback_deliveries` table as the delivery loop sees it
 * (docs/decisions/0104, 0203). A claim counts the attempt and pushes
 * `next_attempt_at` past the lease in the same statement (so a crash
 * mid-attempt counts it and another replica retries after the lease). A job's
 * events go out in order: an event waits until the one before it was delivered
 * or exhausted. Each attempt is mirrored on the job (`callback: {state, attempts, last_status}`).
 */
function callbackStore(options: DispatcherOptions, log: Logger, attempts?: Counter): DeliveryStore<CallbackClaim> {
  const { prisma, keyring } = options;
  return {
    async claim({ limit, leaseMs }) {
      const rows = await prisma.$queryRawUnsafe<{ event_id: string; job_id: string; job: unknown; attempts: number }[]>(
        `WITH due AS (
           SELECT d.event_id FROM job_callback_deliveries d
           WHERE d.state = 'pending' AND d.next_attempt_at <= ${DELIVERY_DUE}
             AND NOT EXISTS (SELECT 1 FROM job_callback_deliveries p WHERE p.job_id = d.job_id AND p.state = 'pending' AND p.seq < d.seq)
           ORDER BY d.next_attempt_at
           LIMIT $2
           FOR UPDATE SKIP LOCKED
         ), claimed AS (
           UPDATE job_callback_deliveries d SET attempts = d.attempts + 1, next_attempt_at = now() + make_interval(secs => $1::double precision / 1000), updated_at = now()
           FROM due WHERE d.event_id = due.event_id
           RETURNING d.event_id, d.job_id, d.job, d.attempts
         ), mirrored AS (
           UPDATE jobs j SET callback_state = 'pending', callback_attempts = c.attempts, updated_at = now()
           FROM claimed c WHERE j.id = c.job_id
         )
         SELECT * FROM claimed`,
        leaseMs,
        limit,
      );
      return rows.map((r) => ({ id: r.event_id, attempt: r.attempts, jobId: r.job_id, job: r.job }));
    },

    async prepare(c): Promise<Outgoing | Skip> {
      const target = await prisma.jobCallbackTarget.findUnique({ where: { jobId: c.jobId } });
      if (!target) return { skip: "exhausted", error: "no callback target" };
      const secret = openCallbackSecret(keyring, c.jobId, sealedIn(target));
      const body = JSON.stringify({ event: "job.updated", event_id: c.id, job: c.job, sent_at: new Date().toISOString() });
      return { url: target.url, body, secret, eventId: c.id, headers: { "user-agent": "gateway-callbacks/1" } };
    },

    async record(c, o: AttemptRecord) {
      await prisma.$transaction([
        prisma.jobCallbackDelivery.updateMany({
          where: { eventId: c.id, attempts: c.attempt },
          data: { state: o.state, lastStatus: o.status, lastError: o.error, nextAttemptAt: o.nextAttemptAt },
        }),
        prisma.job.update({ where: { id: c.jobId }, data: { callbackState: o.state, callbackAttempts: c.attempt, callbackLastStatus: o.status } }),
      ]);
      attempts?.inc({ state: o.state });
      log.info({ job_id: c.jobId, event_id: c.id, attempt: c.attempt, status: o.status, error: o.error, state: o.state }, "callback attempted");
    },
  };
}

/**
 * Delivers `job.updated` callbacks on the one delivery loop: the signed POST
 * (no redirects), retried after `backoffDelayMs(attempt, CALLBACK_BASE_DELAY_MS)`,
 * exhausted after the 8th attempt (CONTRACT.md section 9).
 */
export function createCallbackDispatcher(options: DispatcherOptions): DeliveryLoop<CallbackClaim> {
  return signedDeliveries(options, {
    component: "callbacks",
    name: "callback",
    metric: { name: "callback_attempts_total", help: "Callback delivery attempts, by resulting state (delivered, pending = will retry, exhausted)." },
    settledFreesNext: true, // the job's next event may go now
    store: (log, attempts) => callbackStore(options, log, attempts),
  });
}
