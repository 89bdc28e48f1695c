import { z } from "zod";
import { parseInput } from "@gateway/errors";
import type { LedgerContext } from "../context.js";
import { requestHash } from "../fingerprint.js";
import { settleHold, type SettleHoldResult } from "../hold/settle.js";
import { HoldId, Note, OperationId, PositiveUnits } from "../schemas.js";

export const PostAllotmentInput = z.object({
  operation_id: OperationId,
  hold_id: HoldId,
  /** The charge: > 0, and the allotment's posts and releases never exceed its units. */
  units: PositiveUnits,
  reason: Note,
});
export type PostAllotmentInput = z.input<typeof PostAllotmentInput>;

/**
 * Draws a charge from an open allotment (held → revenue), one posted transfer per
 * call (event ledger.posted); the allotment stays open. Refused without writing:
 * an unknown hold (not_found), a hold that is no allotment or a charge above what is
 * left (invalid_request), a voided allotment (conflict).
 */
export async function postAllotment({ ctx, input }: { ctx: LedgerContext; input: PostAllotmentInput }): Promise<SettleHoldResult> {
  const req = parseInput(PostAllotmentInput, input);
  return settleHold(ctx, {
    kind: "post",
    operationId: req.operation_id,
    holdId: req.hold_id,
    hash: requestHash(["post", req.hold_id, req.units.toString(), req.reason]),
    units: req.units,
    reason: req.reason,
  });
}
