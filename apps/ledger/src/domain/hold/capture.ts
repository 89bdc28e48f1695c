import { z } from "zod";
import { parseInput } from "@gateway/errors";
import type { LedgerContext } from "../context.js";
import { HoldId, NonNegativeUnits, Note, OperationId } from "../schemas.js";
import { settleRequest, type SettleHoldResult } from "./settle.js";

/** `units`: the final charge: 0 <= units <= the hold. */
export const CaptureHoldInput = z.object({ operation_id: OperationId, hold_id: HoldId, units: NonNegativeUnits, reason: Note });
export type CaptureHoldInput = z.input<typeof CaptureHoldInput>;

/** Settles a hold to its final charge (held → revenue) and releases the rest (held → available). */
export async function captureHold({ ctx, input }: { ctx: LedgerContext; input: CaptureHoldInput }): Promise<SettleHoldResult> {
  const req = parseInput(CaptureHoldInput, input);
  return settleRequest(ctx, "capture", req);
}
