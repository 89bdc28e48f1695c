import { HoldProtocol, type HoldSpec } from "@gateway/ledger-client";
import type { ManagedAiContext } from "../context.js";

/**
 * A usage record's own hold as the ledger-client's hold protocol describes it
 * (docs/decisions/0224): reserve:<id>, capture:<id>, void:<id>, expiring when the
 * record says. The request's reservation, the reconciler's and operators' replays
 * all describe it from the record, so they send the same movements.
 */
export function recordHold(record: { id: string; tenantId: string; reservedUnits: bigint; holdExpiresAt: Date }): HoldSpec {
  return {
    id: record.id,
    tenantId: record.tenantId,
    units: record.reservedUnits,
    expiry: { expiresAt: record.holdExpiresAt },
    reason: `managed request ${record.id}`,
  };
}

/** The hold protocol on managed-ai's ledger door; a hold the ledger refuses is decided again after the tenant's allotments are reclaimed. */
export function holdsOf(ctx: Pick<ManagedAiContext, "ledgerCalls" | "allotments">): HoldProtocol {
  return new HoldProtocol(ctx.ledgerCalls, (tenantId) => ctx.allotments.reclaim(tenantId));
}
