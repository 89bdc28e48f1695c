import { isAppError } from "@gateway/errors";
import type { Logger } from "@gateway/logger";

/** Reclaims before a refusal stands. */
export const RECLAIM_ROUNDS = 3;

/**
 * What a reclaim of a tenant's allotments found: none live; live ones that had
 * nothing more to give (another request or replica may just have given it back);
 * something given back now.
 */
export type Reclaimed = "none" | "kept" | "given";

/**
 * A hold of a tenant's decided on everything the tenant has (CONTRACT.md sections 4,
 * 8, 9, docs/decisions/0028, addendum of issue 40): the balance views count what the
 * tenant's allotments hold for calls not yet made as available, so a refusal for want
 * of balance may not leave it out. Refused, `reclaim` has the allotments give back
 * what no call has claimed (managed-ai's `ReclaimAllotments`, which also takes over an
 * allotment being opened and sends the releases other replicas sent) and the ledger
 * decides again: after the first reclaim whenever the tenant has a live allotment
 * (what it gave may have landed just after the refusal), after later ones only when
 * they gave something (a new allotment may open meanwhile). The last refusal stands,
 * and so does any other error; a reclaim that fails (managed-ai unreachable) leaves the
 * refusal as the ledger gave it, as before allotments (`reclaim` logs it).
 */
export async function reserveReclaiming<T>(reserve: () => Promise<T>, reclaim: () => Promise<Reclaimed>): Promise<T> {
  for (let round = 0; ; round++) {
    try {
      return await reserve();
    } catch (err) {
      if (!(isAppError(err) && err.code === "insufficient_balance") || round >= RECLAIM_ROUNDS) throw err;
      // A reclaim that fails (managed-ai unreachable) leaves the refusal as the ledger gave it.
      const reclaimed = await reclaim().catch(() => "none" as const);
      if (reclaimed === "none" || (reclaimed === "kept" && round > 0)) throw err;
    }
  }
}

/** The one call of managed-ai's contract a reclaim needs (its gRPC client has it). */
export type ReclaimAllotmentsClient = { ReclaimAllotments(request: { tenant_id: string }): Promise<{ outcome: string }> };

/**
 * The `reclaim` of a service that holds money outside managed-ai (jobs, messaging): managed-ai's
 * `ReclaimAllotments` for the tenant, its failure logged and thrown (the ledger's refusal stands).
 */
export function reclaimThrough(managedAi: ReclaimAllotmentsClient, logger: Logger): (tenantId: string) => Promise<Reclaimed> {
  return async (tenantId) => {
    try {
      return (await managedAi.ReclaimAllotments({ tenant_id: tenantId })).outcome as Reclaimed;
    } catch (err) {
      logger.warn({ err, tenant_id: tenantId }, "reclaiming the tenant's allotments failed; the ledger's refusal stands");
      throw err;
    }
  };
}
