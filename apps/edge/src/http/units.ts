import { AppError } from "@gateway/errors";
import { z } from "zod";

/** Integer units of USD 0.0001 as JSON numbers: whole, non-negative, exactly representable. */
export const UnitsNumber = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
export const PositiveUnitsNumber = z.number().int().min(1).max(Number.MAX_SAFE_INTEGER);

/** int64 units from a service (decimal string) as a JSON number; never rounded silently. */
export function unitsToNumber(units: string): number {
  const value = BigInt(units);
  if (value > BigInt(Number.MAX_SAFE_INTEGER) || value < BigInt(Number.MIN_SAFE_INTEGER)) {
    throw new AppError("internal_error", "An amount is too large to represent exactly.");
  }
  return Number(value);
}

/** The contract's id pattern, for path parameters. */
export const PathId = z.string().regex(/^[A-Za-z0-9_-]{1,128}$/, "must be 1-128 of A-Z a-z 0-9 _ -");

/** The contract's Idempotency-Key pattern. */
export const IdempotencyKey = z.string().regex(/^[A-Za-z0-9._:-]{1,128}$/, "must be 1-128 of A-Z a-z 0-9 . _ : -");
