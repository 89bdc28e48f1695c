import { z } from "zod";

/**
 * `limit` of a list in an HTTP query string: 1..max, absent for the list's
 * default (which the route's description names).
 */
export function listLimitQuery(max: number) {
  return z.coerce.number().int().min(1).max(max).optional();
}

/**
 * `limit` of a list request between services: 0..max, where 0 (the proto
 * default) or absent means `fallback`. Parses to the limit to apply.
 */
export function listLimit(max: number, fallback: number) {
  return z
    .number()
    .int()
    .min(0)
    .max(max)
    .optional()
    .transform((n) => n || fallback);
}
