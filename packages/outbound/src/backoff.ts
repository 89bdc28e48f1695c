/** Exponent cap: beyond it the delay stops doubling (and never overflows). */
const MAX_DOUBLINGS = 20;

/**
 * Delay before the next attempt after `failedAttempts` failures (1 = after the
 * first): `baseMs * 2^(failedAttempts - 1)`, scaled by a jitter factor in
 * [0.5, 1.5) so that receivers recovering from an outage are not hit in lockstep.
 */
export function backoffDelayMs(failedAttempts: number, baseMs: number, random: () => number = Math.random): number {
  const doublings = Math.min(Math.max(0, Math.floor(failedAttempts) - 1), MAX_DOUBLINGS);
  return Math.round(baseMs * 2 ** doublings * (0.5 + random()));
}
