import { z } from "zod";
import { parseInput } from "@gateway/errors";
import type { LedgerContext } from "../context.js";
import { HoldId, Note, OperationId } from "../schemas.js";
import { settleRequest, type SettleHoldResult } from "./settle.js";

export const VoidHoldInput = z.object({ operation_id: OperationId, hold_id: HoldId, reason: Note });
export type VoidHoldInput = z.input<typeof VoidHoldInput>;

/** Releases a whole hold (held → available); of an allotment, what its posts and releases left (and closes it). */
export async function voidHold({ ctx, input }: { ctx: LedgerContext; input: VoidHoldInput }): Promise<SettleHoldResult> {
  const req = parseInput(VoidHoldInput, input);
  return settleRequest(ctx, "void", req);
}
