import { z } from "zod";
import { AppError, parseInput } from "@gateway/errors";
import type { ManagedAiContext } from "../context.js";
import { Actor, ResourceId } from "../schemas.js";

export const DeleteConnectedAccountInput = z.object({ actor: Actor, tenant_id: ResourceId, id: ResourceId });

/**
 * Deletes one of the tenant's accounts (another tenant's is not found). An
 * account an ai-model instance still uses is kept (409): point the instance
 * elsewhere first. Other services' references are theirs to handle (the
 * account then reveals as not found).
 */
export async function deleteConnectedAccount({ ctx, input }: { ctx: ManagedAiContext; input: z.input<typeof DeleteConnectedAccountInput> }): Promise<void> {
  const q = parseInput(DeleteConnectedAccountInput, input);
  await ctx.writeCatalog(async (tx, emit) => {
    const account = await ctx.store.locks.connectedAccount(tx, q.tenant_id, q.id);
    if (!account) throw new AppError("not_found", `No connected account ${q.id}.`);
    const user = await ctx.store.instances.usingAccount(tx, q.tenant_id, q.id);
    if (user) throw new AppError("conflict", `The ${user.serviceId} instance ${user.alias} uses this account; change it first.`);
    await ctx.store.accounts.delete(tx, q.id);
    await emit("managed_ai.connected_account_changed", {
      actor: q.actor,
      account_id: q.id,
      tenant_id: q.tenant_id,
      provider: account.provider,
      change: "deleted",
    });
  });
}
