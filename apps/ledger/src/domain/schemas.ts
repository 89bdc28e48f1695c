import { z } from "zod";
import { IDEMPOTENCY_KEY_PATTERN } from "@gateway/contract";

// Ids and int64 units (decimal strings over gRPC) are the contract's, defined once.
export { Id as HoldId, Id as TenantId, NonNegativeUnits, PositiveUnits } from "@gateway/contract";

/** Operation ids are caller-chosen (an Idempotency-Key, a request id): the Idempotency-Key's characters and length. */
export const OperationId = z.string().regex(IDEMPOTENCY_KEY_PATTERN, "operation_id must be 1-128 of A-Z a-z 0-9 . _ : -");

/**
 * An optional audit note ("" when absent). Up to 512 characters: callers put a
 * contract-sized reason (1-240) into it with a prefix of their own, e.g. managed-ai's
 * "released: <operator's reason>", and the note must take the whole reason.
 */
export const NOTE_MAX = 512;
export const Note = z.string().trim().max(NOTE_MAX).default("");
