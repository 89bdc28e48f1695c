import { HoldProtocol, type HoldSpec } from "@gateway/ledger-client";
import type { AppContext } from "../app-context.js";

/**
 * A push message's hold as the ledger-client's hold protocol describes it
 * (docs/decisions/0224): reserve:<id>, capture:<id>, void:<id> of the message's id,
 * expiring when the message says; the sender and the recovery describe it alike.
 */
export function pushHold(msg: { id: string; tenantId: string; reservedUnits: bigint; holdExpiresAt: Date }): HoldSpec {
  return { id: msg.id, tenantId: msg.tenantId, units: msg.reservedUnits, expiry: { expiresAt: msg.holdExpiresAt }, reason: `push message ${msg.id}` };
}

/** The hold protocol on messaging's ledger door; a refused hold is decided again after the tenant's allotments are reclaimed (managed-ai). */
export function holdsOf(ctx: Pick<AppContext, "ledger" | "reclaimAllotments">): HoldProtocol {
  return new HoldProtocol(ctx.ledger, ctx.reclaimAllotments);
}
