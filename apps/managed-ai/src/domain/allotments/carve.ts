import { isAppError } from "@gateway/errors";
import { type LedgerCalls, postOperation, reserveOperation } from "@gateway/ledger-client";
import type { ledger } from "@gateway/protos";
import type { Store } from "../ports.js";

/** How long a carved hold lasts (informative: an operator decides it). */
export const CARVED_HOLD_TTL_SECONDS = 86_400;

/**
 * The reservation that moves a record's claim out of its allotment into a hold
 * of its own (an operator decides its outcome): reserve:<id> for the record's
 * reservation, taken from the allotment in the same step (docs/decisions/0028).
 * The request's settlement, the reconciler and operators all send exactly this,
 * so a replay finds the same hold.
 *
 * Its release from the allotment is named post:<id>, the name of the request's own
 * charge from the allotment: a request draws on its allotment once, either by its
 * post or by its carve, whichever reaches the ledger first (the other is refused as
 * a conflict). So a charge posted while a record was being fenced (a settlement whose
 * record write failed, a batch retried after a restart) can never be carved again,
 * and a carved one can never be posted.
 */
export function carveReserve(row: { id: string; tenantId: string; reservedUnits: bigint }, allotmentHoldId: string): ledger.ReserveRequest {
  return {
    operation_id: reserveOperation(row.id),
    tenant_id: row.tenantId,
    units: row.reservedUnits.toString(),
    // Counted from the ledger's clock, and the same in every replay (an absolute
    // expiry would be in the past for the reconciler's late replay).
    ttl_seconds: CARVED_HOLD_TTL_SECONDS,
    reason: `managed request ${row.id}`,
    from_hold_id: allotmentHoldId,
    from_units: row.reservedUnits.toString(),
    from_operation_id: postOperation(row.id),
  };
}

/**
 * The hold of a record claimed from an allotment: carved out of the allotment by
 * replaying the carve (which takes it now if it never happened), or the charge the
 * request itself posted from the allotment, when that came first (then there is no
 * hold to carve: the request was charged, `posted` units). Any other refusal means
 * the allotment no longer has the claim, which the reconciler's closing never
 * allows (it waits for such records): an error, not a decision.
 */
export async function carvedHold({
  ctx,
  input: { row },
}: {
  ctx: { store: { allotments: Pick<Store["allotments"], "get"> }; ledgerCalls: Pick<LedgerCalls, "reserve" | "transfers"> };
  input: { row: { id: string; tenantId: string; reservedUnits: bigint; allotmentId: string } };
}): Promise<Carved> {
  const allotment = await ctx.store.allotments.get(row.allotmentId);
  if (!allotment?.holdId) throw new Error(`record ${row.id}: its allotment ${row.allotmentId} has no hold`);
  try {
    const res = await ctx.ledgerCalls.reserve(carveReserve(row, allotment.holdId));
    return { holdId: res.hold_id, replayed: res.replayed };
  } catch (err) {
    if (isAppError(err) && err.code === "conflict") {
      const [post] = await ctx.ledgerCalls.transfers([postOperation(row.id)]);
      if (post?.kind === "post") return { posted: BigInt(post.units) };
    }
    throw err;
  }
}

/** A carve's outcome: the record's own hold, or the charge it had posted from its allotment first. */
export type Carved = { holdId: string; replayed: boolean; posted?: undefined } | { posted: bigint; holdId?: undefined };
