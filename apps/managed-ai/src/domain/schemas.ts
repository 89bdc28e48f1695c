import { z } from "zod";
import { AppError } from "@gateway/errors";
import { listLimit } from "@gateway/contract";

/** Path ids and aliases (spec section 8) and int64 units (decimal strings over gRPC): the contract's, defined once. */
export { Id as ResourceId, NonNegativeUnits } from "@gateway/contract";

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
export const ListLimit = (max: number) => listLimit(max, max);

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
