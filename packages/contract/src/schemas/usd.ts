import { z } from "zod";

/**
 * A USD amount as the cost headers carry it (`X-Service-Estimated-Cost`,
 * `X-Service-Final-Cost`): a decimal with exactly four places, `"0.0123"`, the
 * form `unitsToUsdString` of `@gateway/contract/money` writes (the one formatting of
 * units as USD). The whole part fits every int64 units value (15 digits).
 */
export const USD_DECIMAL_PATTERN = /^-?(0|[1-9]\d{0,14})\.\d{4}$/;
export const UsdDecimal = z.string().regex(USD_DECIMAL_PATTERN, "must be a USD amount with exactly four decimals");

/**
 * A USD amount a client sends as a JSON number (`max_cost`,
 * `max_cost_per_request`): finite and not negative, at most `max` when a
 * route has a ceiling of its own. `usdToUnitsFloor` turns it into units.
 */
export function usdAmount(max?: number) {
  const amount = z.number().min(0);
  return max === undefined ? amount : amount.max(max);
}
