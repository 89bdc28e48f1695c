import type { ManagedAiContext } from "../context.js";
import { resealRows, type ResealResult } from "@gateway/secrets";
import { upstreamKeyContext } from "../credentials.js";
import type { Store } from "../ports.js";

/** Re-sealed now, already current, and the ids whose credential could not be opened (key missing or data damaged). */
export type ReencryptResult = ResealResult;

/**
 * Key rotation, last step: re-seals every stored credential that is not under
 * the keyring's current key, so older keys can then be removed from
 * ENCRYPTION_KEYS (docs/decisions/0015). Safe to run while the service runs and
 * to run again: each row is replaced only if it still holds what was read, and
 * neither its version nor its updated_at changes (the credential is the same).
 */
export async function reencryptUpstreamKeys({
  ctx,
}: {
  ctx: Pick<ManagedAiContext, "keyring" | "logger"> & { store: Pick<Store, "upstreams"> };
}): Promise<ReencryptResult> {
  const { upstreams } = ctx.store;
  return resealRows(ctx.keyring, ctx.logger, "upstream", await upstreams.sealedKeys(), (row) => upstreamKeyContext(row.id), upstreams.replaceKey);
}
