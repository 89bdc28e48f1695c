/**
 * Money is integer units of USD 0.0001 (bigint here). USD decimals appear only
 * at the edges: `max_cost` / `max_cost_per_request` in, cost headers and
 * `pricing.cost` out. Conversions are exact (decimal strings, never floats).
 */
export const UNITS_PER_USD = 10_000n;

/** `123n` → `"0.0123"`: exactly four decimals, as the cost headers require. */
export function unitsToUsdString(units: bigint): string {
  const negative = units < 0n;
  const abs = negative ? -units : units;
  const whole = abs / UNITS_PER_USD;
  const frac = (abs % UNITS_PER_USD).toString().padStart(4, "0");
  return `${negative ? "-" : ""}${whole}.${frac}`;
}

/** For JSON bodies (`pricing.cost`): the same value as a number. */
export function unitsToUsdNumber(units: bigint): number {
  return Number(unitsToUsdString(units));
}

/**
 * The largest whole number of units not above a USD amount given as a JSON
 * number (e.g. a `max_cost` of 0.01235 allows 123 units). Handles exponent
 * notation exactly (1e-7 → 0 units).
 */
export function usdToUnitsFloor(usd: number): bigint {
  if (!Number.isFinite(usd) || usd < 0) throw new RangeError("a USD amount must be a finite, non-negative number");
  const [mantissa = "0", exponentText] = usd.toString().toLowerCase().split("e");
  const exponent = Number(exponentText ?? "0");
  const [intPart = "0", fracPart = ""] = mantissa.split(".");
  // value = (intPart.fracPart) × 10^exponent; units = value × 10^4
  let digits = `${intPart}${fracPart}`.replace(/^0+(?=\d)/, "");
  const scale = fracPart.length - exponent - 4; // value × 10^4 = digits × 10^-scale
  if (scale <= 0) return BigInt(digits) * 10n ** BigInt(-scale);
  if (scale >= digits.length) return 0n;
  digits = digits.slice(0, digits.length - scale);
  return BigInt(digits || "0");
}
