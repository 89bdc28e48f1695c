import { HoldProtocol, type HoldSpec, type Settlement } from "@gateway/ledger-client";
import type { JobsContext } from "../context.js";

/**
 * An energy lease's hold as the ledger-client's hold protocol describes it
 * (docs/decisions/0224): reserve:<job id>, capture:<job id>, void:<job id>, for the
 * quote's cost, held for the verification window and the lease's duration and an hour
 * more. The request that creates the lease and the runner describe it alike.
 */
export function leaseHold(
  lease: { id: string; jobId: string; tenantId: string; costUnits: bigint; durationSeconds: number },
  tron: Pick<JobsContext["tron"], "verifyTimeoutSeconds">,
): HoldSpec {
  return {
    id: lease.jobId,
    tenantId: lease.tenantId,
    units: lease.costUnits,
    expiry: { ttlSeconds: tron.verifyTimeoutSeconds + lease.durationSeconds + 3_600 },
    reason: `energy lease ${lease.id}`,
  };
}

/** The hold protocol on jobs' ledger door; a refused hold is decided again after the tenant's allotments are reclaimed (managed-ai). */
export function leaseHolds(ctx: Pick<JobsContext, "ledger" | "reclaimAllotments">): HoldProtocol {
  return new HoldProtocol(ctx.ledger, ctx.reclaimAllotments);
}

/** A lease's capture or void went through; a conflict (the hold settled otherwise) is an error, as the ledger answered it. */
export function settled<T>(settlement: Settlement<T>): T {
  if (settlement.kind === "conflict") throw settlement.error;
  return settlement.response;
}
