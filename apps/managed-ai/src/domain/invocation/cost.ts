/**
 * The contract's cost of a request (CONTRACT.md section 6), in units, computed
 * exactly with integers:
 *   ceil((i·pi + o·po) · (10000 − d) / (10000 · 1_000_000))
 * with i input tokens, o output tokens, (pi, po) units per million tokens, d the
 * tenant's discount in basis points. The same formula gives the reservation
 * (worst case: i = the input bound, o = the output cap) and the final charge
 * (the provider's reported usage).
 */
export type Price = { inputUnitsPerMtok: bigint; outputUnitsPerMtok: bigint };

const DENOMINATOR = 10_000n * 1_000_000n;

export function costUnits(inputTokens: bigint, outputTokens: bigint, price: Price, discountBps: bigint): bigint {
  if (inputTokens < 0n || outputTokens < 0n) throw new RangeError("token counts cannot be negative");
  if (discountBps < 0n || discountBps > 10_000n) throw new RangeError("discount must be 0..10000 basis points");
  const numerator = (inputTokens * price.inputUnitsPerMtok + outputTokens * price.outputUnitsPerMtok) * (10_000n - discountBps);
  return (numerator + DENOMINATOR - 1n) / DENOMINATOR;
}
