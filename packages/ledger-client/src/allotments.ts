import type { ledger } from "@gateway/protos";
import { postOperation } from "./operations.js";

/** A request's charge from an allotment's hold: its own posted transfer (post:<request id>). */
export type AllotmentCharge = { requestId: string; holdId: string; units: bigint | string };

/** What an allotment has claimed for calls in flight; the ledger keeps the report with the highest version. */
export type AllotmentReport = { holdId: string; claimedUnits: bigint | string; version: bigint | string };

/** The ledger takes at most this many movements, and as many reports, per ApplyBatch. */
export const MAX_BATCH_ITEMS = 500;

/**
 * A charge as every sender sends it (the batch, and the closing's replay of what
 * a crash kept from its batch): the ledger hashes every field, so they must be
 * the same movement. It carries the request's id, not the sender's.
 */
export function postMovement(charge: AllotmentCharge): ledger.Movement {
  return {
    post: {
      operation_id: postOperation(charge.requestId),
      hold_id: charge.holdId,
      units: charge.units.toString(),
      reason: `managed request ${charge.requestId}`,
    },
    request_id: charge.requestId,
  };
}

export function reportOf(report: AllotmentReport): ledger.AllotmentReport {
  return { hold_id: report.holdId, claimed_units: report.claimedUnits.toString(), version: report.version.toString() };
}
