import { z } from "zod";
import { parseInput } from "@gateway/errors";
import type { LedgerContext } from "../context.js";
import { requestHash } from "../fingerprint.js";
import { HoldId, NonNegativeUnits, Note, OperationId } from "../schemas.js";
import { settleHold, type SettleHoldResult } from "./settle.js";

export const CaptureHoldInput = z.object({
  operation_id: OperationId,
  hold_id: HoldId,
  /** The final charge: 0 <= units <= the hold. */
  units: NonNegativeUnits,
  reason: Note,
});
export type CaptureHoldInput = z.input<typeof CaptureHoldInput>;

/** Settles a hold to its final charge (held → revenue) and releases the rest (held → available). */
export async function captureHold({ ctx, input }: { ctx: LedgerContext; input: CaptureHoldInput }): Promise<SettleHoldResult> {
  const req = parseInput(CaptureHoldInput, input);
  return settleHold(ctx, {
    kind: "capture",
    operationId: req.operation_id,
    holdId: req.hold_id,
    hash: requestHash(["capture", req.hold_id, req.units.toString(), req.reason]),
    units: req.units,
    reason: req.reason,
  });
}
