import { z } from "zod";
import { parseInput } from "@gateway/errors";
import { newId } from "@gateway/contract/ids";
import { connectedAccountContext, sealCredential } from "../credentials.js";
import type { ManagedAiContext } from "../context.js";
import { Actor, ResourceId } from "../schemas.js";
import type { ConnectedAccountView } from "./view.js";

/** Provider kinds are lower-case names: `openai` (AI instances), `telegram` (push targets), ... */
export const ProviderKind = z.string().regex(/^[a-z0-9_-]{1,64}$/, "provider must be 1-64 of a-z 0-9 _ -");

export const CreateConnectedAccountInput = z.object({
  actor: Actor,
  tenant_id: ResourceId,
  provider: ProviderKind,
  name: z.string().trim().min(1, "name must not be empty").max(200),
  // Provider keys and bot tokens travel in headers and URLs: printable ASCII, no spaces.
  secret: z.string().regex(/^[\x21-\x7e]{1,4096}$/, "secret must be 1-4096 printable ASCII characters without spaces"),
});
export type CreateConnectedAccountInput = z.input<typeof CreateConnectedAccountInput>;

/** Stores a credential for the tenant, sealed with the current encryption key (the account id is the associated data). */
export async function createConnectedAccount({ ctx, input }: { ctx: ManagedAiContext; input: CreateConnectedAccountInput }): Promise<ConnectedAccountView> {
  const q = parseInput(CreateConnectedAccountInput, input);
  const id = newId("acct");
  const sealed = sealCredential(ctx.keyring, q.secret, connectedAccountContext(id));
  return ctx.writeCatalog(async (tx, emit) => {
    const row = await ctx.store.accounts.create(tx, {
      id,
      tenantId: q.tenant_id,
      provider: q.provider,
      name: q.name,
      secretCiphertext: sealed.ciphertext,
      secretKeyId: sealed.keyId,
    });
    await emit("managed_ai.connected_account_changed", { actor: q.actor, account_id: id, tenant_id: q.tenant_id, provider: q.provider, change: "created" });
    return row;
  });
}
