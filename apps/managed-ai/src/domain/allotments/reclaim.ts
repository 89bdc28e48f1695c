import { z } from "zod";
import { parseInput } from "@gateway/errors";
import type { Reclaimed } from "@gateway/ledger-client";
import type { ManagedAiContext } from "../context.js";
import { ResourceId } from "../schemas.js";

export const ReclaimAllotmentsInput = z.object({ tenant_id: ResourceId });

/**
 * Another service's hold of the tenant (a push, a lease) was refused: the tenant's
 * allotments give back what no call has claimed (`Allotments.reclaim`), so that the
 * hold can be decided on everything the balance views show as available (CONTRACT.md
 * sections 4, 8, 9), and says what it found (ledger-client's `reserveReclaiming` decides on it).
 */
export async function reclaimAllotments({ ctx, input }: { ctx: ManagedAiContext; input: z.input<typeof ReclaimAllotmentsInput> }): Promise<Reclaimed> {
  const q = parseInput(ReclaimAllotmentsInput, input);
  return ctx.allotments.reclaim(q.tenant_id);
}
