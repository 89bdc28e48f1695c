import { z } from "zod";
import { AppError, parseInput } from "@gateway/errors";
import { connectedAccountContext, CredentialError, openCredential } from "../credentials.js";
import type { ManagedAiContext } from "../context.js";
import type { ConnectedAccount } from "../rows.js";
import { ResourceId } from "../schemas.js";

export const RevealConnectedAccountInput = z.object({ tenant_id: ResourceId, id: ResourceId });

export type RevealedAccount = { id: string; provider: string; secret: string };

/** Opens a stored account's secret; a blob the keyring cannot open is a configuration fault (503), logged without secrets. */
export function openAccount(ctx: ManagedAiContext, row: Pick<ConnectedAccount, "id" | "provider" | "secretCiphertext" | "secretKeyId">): RevealedAccount {
  try {
    const secret = openCredential(ctx.keyring, { ciphertext: row.secretCiphertext, keyId: row.secretKeyId }, connectedAccountContext(row.id));
    return { id: row.id, provider: row.provider, secret };
  } catch (err) {
    if (!(err instanceof CredentialError)) throw err;
    ctx.logger.error({ account_id: row.id, key_id: row.secretKeyId }, "connected account secret cannot be opened with ENCRYPTION_KEYS");
    throw new AppError("unavailable", "The connected account's credential cannot be used right now.");
  }
}

/**
 * The secret of one of the tenant's connected accounts, for other services
 * (internal gRPC only; the edge never calls it). Unknown ids and other
 * tenants' accounts are both not found.
 */
export async function revealConnectedAccount({
  ctx,
  input,
}: {
  ctx: ManagedAiContext;
  input: z.input<typeof RevealConnectedAccountInput>;
}): Promise<RevealedAccount> {
  const q = parseInput(RevealConnectedAccountInput, input);
  const row = await ctx.store.accounts.get(q.tenant_id, q.id);
  if (!row) throw new AppError("not_found", `No connected account ${q.id}.`);
  return openAccount(ctx, row);
}
