import { z } from "zod";
import { AppError } from "@gateway/errors";

/**
 * Money is integer units of USD 0.0001 (CONTRACT.md section 1). The ledger
 * keeps them in PostgreSQL `bigint` columns, so the one range of a units
 * value is int64; between services units travel as decimal strings (gRPC
 * int64 with longs as strings), or as numbers when a caller hands one in.
 */
export const UNITS_MIN = -(2n ** 63n);
export const UNITS_MAX = 2n ** 63n - 1n;

/** Any int64 units value (ledger legs and balances may be negative). */
export const Units = z
  .union([z.string().regex(/^-?\d{1,19}$/, "must be a whole number of units"), z.number().int()])
  .transform((v) => BigInt(v))
  .refine((v) => v >= UNITS_MIN && v <= UNITS_MAX, "units out of range (int64)");

/** Units that may be zero (an amount, a charge, a price). */
export const NonNegativeUnits = Units.refine((v) => v >= 0n, "units must not be negative");

/** Units that must be above zero (a credit, a budget). */
export const PositiveUnits = Units.refine((v) => v > 0n, "units must be positive");

/**
 * Units in HTTP bodies, as JSON numbers: whole, non-negative and exactly
 * representable (at most 2^53 - 1, about USD 900 billion).
 */
export const UnitsNumber = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
export const PositiveUnitsNumber = z.number().int().min(1).max(Number.MAX_SAFE_INTEGER);

/** int64 units from a service (decimal string) as a JSON number; never rounded silently. */
export function unitsToNumber(units: string | bigint): number {
  const value = BigInt(units);
  if (value > BigInt(Number.MAX_SAFE_INTEGER) || value < BigInt(Number.MIN_SAFE_INTEGER)) {
    throw new AppError("internal_error", "An amount is too large to represent exactly.");
  }
  return Number(value);
}
