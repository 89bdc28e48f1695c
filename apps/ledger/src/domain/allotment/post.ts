import { z } from "zod";
import { parseInput } from "@gateway/errors";
import type { LedgerContext } from "../context.js";
import { settleRequest, type SettleHoldResult } from "../hold/settle.js";
import { HoldId, Note, OperationId, PositiveUnits } from "../schemas.js";

/** `units`: the charge: > 0, and the allotment's posts and releases never exceed its units. */
export const PostAllotmentInput = z.object({ operation_id: OperationId, hold_id: HoldId, units: PositiveUnits, reason: Note });
export type PostAllotmentInput = z.input<typeof PostAllotmentInput>;

/**
 * Draws a charge from an open allotment (held → revenue), one posted transfer per
 * call (event ledger.posted); the allotment stays open. Refused without writing:
 * an unknown hold (not_found), a hold that is no allotment or a charge above what is
 * left (invalid_request), a voided allotment (conflict).
 */
export async function postAllotment({ ctx, input }: { ctx: LedgerContext; input: PostAllotmentInput }): Promise<SettleHoldResult> {
  const req = parseInput(PostAllotmentInput, input);
  return settleRequest(ctx, "post", req);
}
