import type { Keyring } from "@gateway/secrets";
import type { Logger } from "@gateway/logger";
import { Counter, type Registry } from "@gateway/metrics";
import type { CallbackSettings } from "../db.js";
import type { PrismaClient } from "../generated/prisma/client.js";
import { BatchLoop } from "@gateway/events";
import { backoffDelayMs, deliver, signBody } from "@gateway/outbound";
import { callbackPolicy, openCallbackSecret } from "./target.js";

/** At most this many attempts per event (spec section 8). */
export const MAX_ATTEMPTS = 8;
const BATCH = 20;

type Claimed = { event_id: string; job_id: string; job: unknown; attempts: number };

export type DispatcherOptions = {
  prisma: PrismaClient;
  keyring: Keyring;
  logger: Logger;
  settings: CallbackSettings;
  pollMs: number;
  /** While polls find nothing, their interval doubles up to this (retries wake it when due). Default `pollMs`. */
  maxPollMs?: number;
  registry?: Registry;
  deliver?: typeof deliver;
  random?: () => number;
};

/**
 * Delivers `job.updated` callbacks from the `job_callback_deliveries` rows
 * (docs/decisions/0104). The schedule is the rows' `next_attempt_at`: a replica
 * claims due rows with SKIP LOCKED, counts the attempt and pushes
 * `next_attempt_at` past the delivery timeout in the same statement (so a
 * crash mid-attempt counts it and another replica retries after the timeout),
 * posts the signed body, then records the answer: delivered (2xx), retried
 * after `backoffDelayMs(attempts, CALLBACK_BASE_DELAY_MS)`, or exhausted after
 * the 8th attempt. A job's events go out in order: an event waits until the one
 * before it was delivered or exhausted. Each attempt is mirrored on the job
 * (`callback: {state, attempts, last_status}`).
 */
export class CallbackDispatcher {
  private readonly log: Logger;
  private readonly attempts?: Counter;
  private readonly loop: BatchLoop;

  constructor(private readonly options: DispatcherOptions) {
    this.log = options.logger.child({ component: "callbacks" });
    if (options.registry) {
      this.attempts = new Counter({
        name: "callback_attempts_total",
        help: "Callback delivery attempts, by resulting state (delivered, pending = will retry, exhausted).",
        labelNames: ["state"],
        registers: [options.registry],
      });
    }
    this.loop = new BatchLoop({
      round: () => this.runOnce(),
      batchSize: BATCH,
      pollMs: options.pollMs,
      maxPollMs: Math.max(options.pollMs, options.maxPollMs ?? options.pollMs),
      lingerMs: 0,
      flushOnStop: false,
      log: this.log,
      messages: { failed: "callback dispatch failed", finalFlushFailed: "callback dispatch failed" },
    });
  }

  start(): void {
    this.loop.start();
  }

  /** Deliveries were committed: look now rather than at the next poll. */
  kick(): void {
    this.loop.kick();
  }

  async stop(): Promise<void> {
    await this.loop.stop();
  }

  /** Claims and attempts the due deliveries once; returns how many were attempted. */
  async runOnce(): Promise<number> {
    const { prisma, settings } = this.options;
    const claimMs = settings.timeoutMs + 5_000;
    const claimed = await prisma.$queryRawUnsafe<Claimed[]>(
      `WITH due AS (
         SELECT d.event_id FROM job_callback_deliveries d
         WHERE d.state = 'pending' AND d.next_attempt_at <= now()
           AND NOT EXISTS (SELECT 1 FROM job_callback_deliveries p WHERE p.job_id = d.job_id AND p.state = 'pending' AND p.seq < d.seq)
         ORDER BY d.next_attempt_at
         LIMIT ${BATCH}
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
      claimMs,
    );
    await Promise.all(claimed.map((c) => this.attempt(c)));
    return claimed.length;
  }

  private async attempt(c: Claimed): Promise<void> {
    const { prisma, keyring, settings } = this.options;
    const target = await prisma.jobCallbackTarget.findUnique({ where: { jobId: c.job_id } });
    let status: number | null = null;
    let error: string | null = null;
    let ok = false;
    if (!target) {
      error = "no callback target";
    } else {
      const secret = openCallbackSecret(keyring, c.job_id, { ciphertext: target.secretCiphertext, keyId: target.secretKeyId });
      const body = JSON.stringify({ event: "job.updated", event_id: c.event_id, job: c.job, sent_at: new Date().toISOString() });
      const answer = await (this.options.deliver ?? deliver)(target.url, {
        method: "POST",
        body,
        headers: {
          "content-type": "application/json",
          "user-agent": "gateway-callbacks/1",
          "x-service-event-id": c.event_id,
          "x-service-signature": signBody(secret, body),
        },
        timeoutMs: settings.timeoutMs,
        policy: callbackPolicy(settings),
        maxRedirects: 0,
      });
      ({ ok, status, error } = answer);
    }
    const state = ok ? "delivered" : c.attempts >= MAX_ATTEMPTS || !target ? "exhausted" : "pending";
    const next = new Date(Date.now() + (state === "pending" ? backoffDelayMs(c.attempts, settings.baseDelayMs, this.options.random) : 0));
    await prisma.$transaction([
      prisma.jobCallbackDelivery.updateMany({
        where: { eventId: c.event_id, attempts: c.attempts },
        data: { state, lastStatus: status, lastError: error, nextAttemptAt: next },
      }),
      prisma.job.update({ where: { id: c.job_id }, data: { callbackState: state, callbackAttempts: c.attempts, callbackLastStatus: status } }),
    ]);
    this.attempts?.inc({ state });
    this.log.info({ job_id: c.job_id, event_id: c.event_id, attempt: c.attempts, status, error, state }, "callback attempted");
    if (state !== "pending")
      this.kick(); // the job's next event may go now
    else this.loop.wakeBy(next.getTime());
  }
}
