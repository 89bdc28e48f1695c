/**
 * Money is integer units of USD 0.0001 (bigint in code, decimal strings on the
 * wire between services). USD decimals appear only at the API's edges:
 * `max_cost` / `max_cost_per_request` in, cost headers and `pricing.cost` out.
 * Every conversion is exact: decimal digits, never float multiplication.
 */
export const UNITS_PER_USD = 10_000n;

/** `123n` (or `"123"`) → `"0.0123"`: exactly four decimals, as the cost headers require. */
export function unitsToUsdString(units: bigint | string): string {
  const value = BigInt(units);
  const abs = value < 0n ? -value : value;
  return `${value < 0n ? "-" : ""}${abs / UNITS_PER_USD}.${(abs % UNITS_PER_USD).toString().padStart(4, "0")}`;
}

/** For JSON bodies (`pricing.cost`): the same value as a number (exact for amounts below 2^53 units). */
export function unitsToUsdNumber(units: bigint | string): number {
  return Number(unitsToUsdString(units));
}

/**
 * The largest whole number of units not above a USD amount given as a JSON
 * number: a `max_cost` of 0.01235 allows 123 units; exponent notation is read
 * exactly (1e-7 → 0 units).
 */
export function usdToUnitsFloor(usd: number): bigint {
  if (!Number.isFinite(usd) || usd < 0) throw new RangeError("a USD amount must be a finite, non-negative number");
  const [mantissa = "0", exponentText] = usd.toString().toLowerCase().split("e");
  const exponent = Number(exponentText ?? "0");
  const [intPart = "0", fracPart = ""] = mantissa.split(".");
  // value = (intPart.fracPart) × 10^exponent; units = value × 10^4 = digits × 10^-scale
  let digits = `${intPart}${fracPart}`.replace(/^0+(?=\d)/, "");
  const scale = fracPart.length - exponent - 4;
  if (scale <= 0) return BigInt(digits) * 10n ** BigInt(-scale);
  if (scale >= digits.length) return 0n;
  digits = digits.slice(0, digits.length - scale);
  return BigInt(digits || "0");
}
