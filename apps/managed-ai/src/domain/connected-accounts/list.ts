import { z } from "zod";
import { parseInput } from "@gateway/errors";
import type { ManagedAiContext } from "../context.js";
import { ResourceId } from "../schemas.js";
import { ACCOUNT_COLUMNS, type ConnectedAccountView } from "./view.js";

export const ListConnectedAccountsInput = z.object({ tenant_id: ResourceId });

/** The tenant's connected accounts, newest first (at most 200), without secrets. */
export async function listConnectedAccounts({
  ctx,
  input,
}: {
  ctx: ManagedAiContext;
  input: z.input<typeof ListConnectedAccountsInput>;
}): Promise<ConnectedAccountView[]> {
  const q = parseInput(ListConnectedAccountsInput, input);
  return ctx.prisma.connectedAccount.findMany({
    where: { tenantId: q.tenant_id },
    select: ACCOUNT_COLUMNS,
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    take: 200,
  });
}
