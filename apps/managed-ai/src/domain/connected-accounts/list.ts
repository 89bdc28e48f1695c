import { z } from "zod";
import { parseInput } from "@gateway/errors";
import type { ManagedAiContext } from "../context.js";
import { ResourceId } from "../schemas.js";
import type { ConnectedAccountView } from "./view.js";

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
  return ctx.store.accounts.list(q.tenant_id);
}
