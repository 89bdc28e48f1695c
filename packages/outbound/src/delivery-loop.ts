import { BatchLoop } from "@gateway/events-runtime";
import type { Logger } from "@gateway/logger";
import { nextStep, type RetryRule } from "./attempts.js";
import type { DeliveryResult } from "./deliver.js";
import type { EgressPolicy } from "./policy.js";
import { postSigned, type SignedPost } from "./signed-post.js";

/** A claimed delivery: its row's id and the number of the attempt about to be made (1 = the first). */
export type DeliveryClaim = { id: string; attempt: number };

/** What a claimed delivery sends: the signed POST's url, body, secret and event id (the store builds the body). */
export type Outgoing = { url: string; body: string; secret: string | null; eventId: string; headers?: Record<string, string> };

/**
 * A claimed delivery with nothing to send:
 * - `exhausted`: give up now (no target any more), the attempt counted;
 * - `failed`: an attempt that failed before any call (a secret that does not open), retried as any failure;
 * - `canceled`: the delivery no longer applies (its webhook was revoked, its event is gone).
 */
export type Skip = { skip: "exhausted" | "failed" | "canceled"; error: string | null };

export type DeliveryState = "delivered" | "pending" | "exhausted" | "canceled";

/** The outcome of one attempt, for the store to write (with the attempt number it claimed). */
export type AttemptRecord = {
  attempt: number;
  state: DeliveryState;
  /** The receiver's final HTTP status, null when none answered (or nothing was sent). */
  status: number | null;
  /** A short code (`http_500`, `timeout`, `private_address`, ...), null when delivered. */
  error: string | null;
  /** When a `pending` delivery is due again (now for the other states). */
  nextAttemptAt: Date;
};

/**
 * A service's own delivery table, seen by the loop. Each service implements it
 * with its Prisma client or SQL; the loop owns everything else.
 */
/**
 * What a store's claim compares `next_attempt_at` with: a `timestamptz(3)` column rounds,
 * so a row written with `now()` can read up to half a millisecond in the future, and the
 * claim that its commit's kick starts would miss it (and leave it to the next poll, up to
 * a minute later).
 */
export const DELIVERY_DUE = "now() + interval '1 millisecond'";

export type DeliveryStore<C extends DeliveryClaim> = {
  /**
   * Claims at most `limit` due deliveries (SKIP LOCKED, so replicas share the
   * work) and pushes each one's next attempt `leaseMs` ahead in the same
   * statement: a process that dies mid-attempt leaves the row to be claimed
   * again once the lease has passed. "Due" is `next_attempt_at <= ${DELIVERY_DUE}`.
   */
  claim(input: { limit: number; leaseMs: number }): Promise<C[]>;
  /** The signed POST to make for a claim, or why there is none. */
  prepare(claim: C): Promise<Outgoing | Skip>;
  /** Writes the attempt's outcome (only if the row is still as claimed: a late writer changes nothing). */
  record(claim: C, outcome: AttemptRecord): Promise<void>;
};

export type DeliveryLoopOptions<C extends DeliveryClaim> = {
  store: DeliveryStore<C>;
  /** Where the deliveries may go (`egressPolicy`). */
  policy: EgressPolicy;
  /** How long a receiver may take to answer one attempt (2xx within it = delivered). */
  timeoutMs: number;
  retry: RetryRule;
  /** Deliveries claimed per round. */
  batchSize: number;
  /** Attempts in flight at once (default `batchSize`). */
  concurrency?: number;
  /** A claim's lease is `timeoutMs` plus this (default 5 s). */
  leaseMarginMs?: number;
  /** Redirects followed per attempt (each hop checked again); default that of `deliver`. */
  maxRedirects?: number;
  /** Fallback poll for work nobody announced (other replicas, restarts). */
  pollMs: number;
  /** While polls find nothing, their interval doubles up to this; retries wake the loop when due. Default `pollMs`. */
  maxPollMs?: number;
  /** A settled delivery may free another (a job's next event waits for the one before): look again at once. */
  settledFreesNext?: boolean;
  log: Logger;
  /** Names the queue in log lines ("callback", "conversation webhook"). */
  name: string;
  /** The call itself (tests hand in their own); default `postSigned`. */
  send?: (url: string, req: SignedPost) => Promise<DeliveryResult>;
};

/**
 * The one delivery loop of outbound signed webhooks (docs/decisions/0203), on
 * `BatchLoop`: a round claims due rows from the service's table through its
 * store, makes each signed POST through the egress policy with at most
 * `concurrency` in flight, and records the attempt: delivered (2xx), retried
 * after `backoffDelayMs(attempt, baseDelayMs)` (the loop wakes for it with
 * `wakeBy`), or exhausted after `maxAttempts`. `stop` claims nothing more and
 * waits for the attempts in flight to be recorded (it does not flush: a
 * delivery calls out and may take its whole timeout).
 */
export class DeliveryLoop<C extends DeliveryClaim> {
  private readonly loop: BatchLoop;

  constructor(private readonly options: DeliveryLoopOptions<C>) {
    this.loop = new BatchLoop({
      round: () => this.runOnce(),
      batchSize: options.batchSize,
      pollMs: options.pollMs,
      maxPollMs: Math.max(options.pollMs, options.maxPollMs ?? options.pollMs),
      lingerMs: 0,
      flushOnStop: false,
      log: options.log,
      messages: { failed: `${options.name} dispatch failed; retrying`, finalFlushFailed: `${options.name} dispatch failed` },
    });
  }

  start(): void {
    this.loop.start();
  }

  /** Deliveries were committed: look now rather than at the next poll. */
  kick(): void {
    this.loop.kick();
  }

  /** Claims nothing more; resolves once the attempts in flight are recorded. */
  async stop(): Promise<void> {
    await this.loop.stop();
  }

  /** One round: claims the due deliveries and attempts them; returns how many were claimed. */
  async runOnce(): Promise<number> {
    const { store, batchSize, timeoutMs } = this.options;
    const claims = await store.claim({ limit: batchSize, leaseMs: timeoutMs + (this.options.leaseMarginMs ?? 5_000) });
    await inParallel(claims, this.options.concurrency ?? batchSize, (claim) =>
      this.attempt(claim).catch((err: unknown) =>
        // The row keeps its lease and is claimed again once it has passed.
        this.options.log.warn({ err, delivery_id: claim.id }, `${this.options.name} attempt not recorded`),
      ),
    );
    return claims.length;
  }

  private async attempt(claim: C): Promise<void> {
    const { store, retry } = this.options;
    const prepared = await store.prepare(claim);
    let result: { ok: boolean; status: number | null; error: string | null };
    let final = false;
    if ("skip" in prepared) {
      if (prepared.skip === "canceled") {
        await store.record(claim, { attempt: claim.attempt, state: "canceled", status: null, error: prepared.error, nextAttemptAt: new Date() });
        return;
      }
      result = { ok: false, status: null, error: prepared.error };
      final = prepared.skip === "exhausted";
    } else {
      result = await (this.options.send ?? postSigned)(prepared.url, {
        body: prepared.body,
        secret: prepared.secret,
        eventId: prepared.eventId,
        ...(prepared.headers ? { headers: prepared.headers } : {}),
        timeoutMs: this.options.timeoutMs,
        policy: this.options.policy,
        ...(this.options.maxRedirects !== undefined ? { maxRedirects: this.options.maxRedirects } : {}),
      });
    }
    const step = nextStep(result.ok, claim.attempt, retry, final);
    const nextAttemptAt = new Date(Date.now() + step.retryInMs);
    await store.record(claim, {
      attempt: claim.attempt,
      state: step.state,
      status: result.status,
      error: result.ok ? null : (result.error ?? (result.status !== null ? `http_${result.status}` : "failed")),
      nextAttemptAt,
    });
    if (step.state === "pending") this.loop.wakeBy(nextAttemptAt.getTime());
    else if (this.options.settledFreesNext) this.loop.kick();
  }
}

/** Runs `fn` over `items` with at most `limit` at once. */
async function inParallel<T>(items: T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await fn(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(Math.max(1, limit), items.length) }, worker));
}
