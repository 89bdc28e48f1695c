import type { LedgerContext } from "../context.js";
import { toHoldView, type HoldRow, type HoldView } from "../accounts.js";
import { requestHash } from "../fingerprint.js";
import { movementIds, refuse, type MovementResult } from "../movement.js";
import type { MovementRow } from "../movement-queue.js";

export type SettleHoldResult = MovementResult & { hold: HoldView };

export type Settlement = {
  kind: "capture" | "void" | "post" | "release";
  operationId: string;
  holdId: string;
  hash: string;
  /** The charge for a capture, the units of a post or release; null for a void. */
  units: bigint | null;
  reason: string;
};

/**
 * Second phase of a two-phase transfer, shared by capture and void (and by the
 * partial posts and releases of an allotment, which leave it open): under the
 * tenant's account lock, a replay returns the stored result; an open hold settles
 * exactly once (held → revenue for the charge, held → available for the
 * rest); a settled one refuses any other operation with conflict.
 */
export async function settleHold(ctx: LedgerContext, s: Settlement): Promise<SettleHoldResult> {
  const ids = movementIds();
  const row = await ctx.movements.run({ kind: s.kind, operationId: s.operationId, hash: s.hash, holdId: s.holdId, units: s.units, reason: s.reason, ...ids });
  if (row.outcome !== "ok" && row.outcome !== "replayed") refuse(row.outcome, { status: row.status, units: row.units });
  const hold = holdOf(row);
  return {
    hold: toHoldView(hold),
    balance: { tenantId: hold.tenant_id, available: row.available!, held: row.held! },
    entryId: row.transfer_id!,
    replayed: row.outcome === "replayed",
  };
}

/** The hold columns of a settle row (present on ok and replayed). */
function holdOf(row: MovementRow): HoldRow {
  if (!row.id || !row.tenant_id || row.units === null || !row.status || !row.expires_at || !row.created_at) {
    throw new Error(`ledger_apply returned no hold for outcome ${row.outcome}`);
  }
  return {
    id: row.id,
    tenant_id: row.tenant_id,
    units: row.units,
    status: row.status,
    captured_units: row.captured_units,
    expires_at: row.expires_at,
    created_at: row.created_at,
    settled_at: row.settled_at,
    released_units: row.released_units,
    allotment: row.allotment,
  };
}

/**
 * A settlement verb's checked request (capture, void, post, release) as one movement of
 * its hold: the replay hash is of the kind, the hold, the units when the verb takes them,
 * and the note.
 */
export function settleRequest(
  ctx: LedgerContext,
  kind: Settlement["kind"],
  req: { operation_id: string; hold_id: string; units?: bigint; reason: string },
): Promise<SettleHoldResult> {
  const units = req.units ?? null;
  return settleHold(ctx, {
    kind,
    operationId: req.operation_id,
    holdId: req.hold_id,
    hash: requestHash(units === null ? [kind, req.hold_id, req.reason] : [kind, req.hold_id, units.toString(), req.reason]),
    units,
    reason: req.reason,
  });
}
