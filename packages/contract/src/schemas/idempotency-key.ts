import { z } from "zod";

/** Spec section 8: 1 to 128 characters of A-Z a-z 0-9 . _ : - */
export const IDEMPOTENCY_KEY_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;
const MESSAGE = "must be 1-128 of A-Z a-z 0-9 . _ : -";

/** The `Idempotency-Key` request header's value. */
export const IdempotencyKey = z.string().regex(IDEMPOTENCY_KEY_PATTERN, MESSAGE);

/**
 * The key as it travels over gRPC, where an absent string is "": either ""
 * (no key) or a valid key.
 */
export const OptionalIdempotencyKey = z.union([z.literal(""), IdempotencyKey]).default("");

/**
 * The request headers of a route that takes an `Idempotency-Key`, for the
 * edge's route declarations (`headers`); the description says what a repeat does.
 */
export function idempotencyKeyHeader(description: string) {
  return z.object({ "Idempotency-Key": IdempotencyKey.optional().describe(description) });
}
export type IdempotencyKeyHeader = z.infer<ReturnType<typeof idempotencyKeyHeader>>;
