import { z } from "zod";
import { ID_PATTERN } from "@gateway/ids";

/** Operation ids are caller-chosen (an Idempotency-Key, a request id): 1-128 of A-Z a-z 0-9 . _ : - */
export const OperationId = z.string().regex(/^[A-Za-z0-9._:-]{1,128}$/, "operation_id must be 1-128 of A-Z a-z 0-9 . _ : -");
export const TenantId = z.string().regex(ID_PATTERN, "tenant_id must be 1-128 of A-Z a-z 0-9 _ -");
export const HoldId = z.string().regex(ID_PATTERN, "hold_id must be 1-128 of A-Z a-z 0-9 _ -");

/** int64 units as they arrive over gRPC (decimal strings). */
export const Units = z
  .union([z.string().regex(/^-?\d{1,19}$/), z.number().int()])
  .transform((v) => BigInt(v))
  .refine((v) => v <= 9_223_372_036_854_775_807n && v >= -9_223_372_036_854_775_808n, "units out of range");
export const PositiveUnits = Units.refine((v) => v > 0n, "units must be positive");
export const NonNegativeUnits = Units.refine((v) => v >= 0n, "units must not be negative");

/**
 * An optional audit note ("" when absent). Up to 512 characters: callers put a
 * contract-sized reason (1-240) into it with a prefix of their own, e.g. managed-ai's
 * "released: <operator's reason>", and the note must take the whole reason.
 */
export const NOTE_MAX = 512;
export const Note = z.string().trim().max(NOTE_MAX).default("");
