import { z } from "zod";
import { parseInput } from "@gateway/errors";
import type { LedgerContext } from "../context.js";
import { settleRequest, type SettleHoldResult } from "../hold/settle.js";
import { HoldId, Note, OperationId, PositiveUnits } from "../schemas.js";

/** `units`: > 0; the allotment's posts and releases never exceed its units. */
export const ReleaseAllotmentInput = z.object({ operation_id: OperationId, hold_id: HoldId, units: PositiveUnits, reason: Note });
export type ReleaseAllotmentInput = z.input<typeof ReleaseAllotmentInput>;

/**
 * Gives units of an open allotment back (held → available), one transfer per
 * call (event ledger.released); the allotment stays open. Refused without writing:
 * an unknown hold (not_found), a hold that is no allotment or more than is
 * left (invalid_request), a voided allotment (conflict).
 */
export async function releaseAllotment({ ctx, input }: { ctx: LedgerContext; input: ReleaseAllotmentInput }): Promise<SettleHoldResult> {
  const req = parseInput(ReleaseAllotmentInput, input);
  return settleRequest(ctx, "release", req);
}
