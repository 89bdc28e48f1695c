/**
 * The largest whole number of units (USD 0.0001) not above a USD amount given
 * as a JSON number: `max_cost` 0.01235 allows 123 units. Exact (decimal digits,
 * never float multiplication; exponent notation included).
 */
export function usdToUnitsFloor(usd: number): bigint {
  if (!Number.isFinite(usd) || usd < 0) throw new RangeError("a USD amount must be a finite, non-negative number");
  const [mantissa = "0", exponentText] = usd.toString().toLowerCase().split("e");
  const exponent = Number(exponentText ?? "0");
  const [intPart = "0", fracPart = ""] = mantissa.split(".");
  let digits = `${intPart}${fracPart}`.replace(/^0+(?=\d)/, "");
  const scale = fracPart.length - exponent - 4;
  if (scale <= 0) return BigInt(digits) * 10n ** BigInt(-scale);
  if (scale >= digits.length) return 0n;
  digits = digits.slice(0, digits.length - scale);
  return BigInt(digits || "0");
}
