import { backoffDelayMs } from "./backoff.js";

/** The contract's attempt limit of job callbacks and conversation webhooks (CONTRACT.md section 9): the 8th failure gives up. */
export const MAX_DELIVERY_ATTEMPTS = 8;

/** The retry rule of every outbound delivery queue. */
export type RetryRule = {
  /** At most this many attempts (the contract's 8 for callbacks and webhooks). */
  maxAttempts: number;
  /** First retry delay; doubles per failed attempt, with jitter (`backoffDelayMs`). */
  baseDelayMs: number;
  random?: () => number;
};

/** What follows an attempt: `delivered`, `pending` (retry in `retryInMs`), or `exhausted` (given up). */
export type AttemptStep = { state: "delivered"; retryInMs: 0 } | { state: "pending"; retryInMs: number } | { state: "exhausted"; retryInMs: 0 };

/**
 * After attempt number `attempt` (1 = the first): a 2xx is delivered; a failure
 * is retried after `backoffDelayMs(attempt, baseDelayMs)` until the
 * `maxAttempts`-th, which gives up. `final` gives up at once (nothing to send to).
 */
export function nextStep(ok: boolean, attempt: number, rule: RetryRule, final = false): AttemptStep {
  if (ok) return { state: "delivered", retryInMs: 0 };
  if (final || attempt >= rule.maxAttempts) return { state: "exhausted", retryInMs: 0 };
  return { state: "pending", retryInMs: backoffDelayMs(attempt, rule.baseDelayMs, rule.random) };
}
