import { z } from "zod";
import { ID_PATTERN } from "@gateway/ids";
import { AppError } from "@gateway/errors";

/** Path ids and aliases (spec section 8): 1-128 of A-Z a-z 0-9 _ - */
export const ResourceId = z.string().regex(ID_PATTERN, "must be 1-128 of A-Z a-z 0-9 _ -");

/**
 * Who performs an audited write, as the edge authenticated it (`user:<id>`).
 * Transport hands in what the call carried; a write without one is refused.
 */
export const Actor = z
  .string()
  .optional()
  .pipe(
    z
      .string({ error: "an authenticated actor (x-actor metadata) is required for audited writes" })
      .regex(/^[a-z]+:[A-Za-z0-9_.:-]{1,160}$/, "actor must look like user:<id>"),
  );

/** The `version` a write expects: absent for no check; 0 only when creating. */
export const ExpectedVersion = z.number().int().min(0).max(2_147_483_647).optional();

/** Limits of operator lists: 1..max, 0 (proto default) meaning max. */
export function ListLimit(max: number) {
  return z
    .number()
    .int()
    .min(0)
    .max(max)
    .default(max)
    .transform((n) => n || max);
}

/** int64 units as they arrive over gRPC (decimal strings), not negative. */
export const NonNegativeUnits = z
  .union([z.string().regex(/^\d{1,19}$/, "must be a whole number of units"), z.number().int().min(0)])
  .transform((v) => BigInt(v))
  .refine((v) => v >= 0n && v <= 9_223_372_036_854_775_807n, "units out of range");

/**
 * Optimistic concurrency: a write that names a version must name the current
 * one; creating is writing over version 0 (nothing yet).
 */
export function assertVersion(expected: number | undefined, current: number | undefined, what: string): void {
  if (expected === undefined) return;
  if (current === undefined) {
    if (expected !== 0) throw new AppError("conflict", `${what} does not exist: send no version, or 0, to create it.`);
    return;
  }
  if (expected !== current) throw new AppError("conflict", `${what} is at version ${current}, not ${expected}: read it again and retry.`);
}

/** A write lost a race (the row changed or appeared after we looked). */
export function concurrentWrite(what: string): AppError {
  return new AppError("conflict", `${what} was changed by a concurrent write: read it again and retry.`);
}
