import type { ManagedAiContext } from "../context.js";
import { addReseal, resealRows } from "@gateway/secrets";
import { connectedAccountContext, instanceKeyContext } from "../credentials.js";
import type { Store } from "../ports.js";
import type { ReencryptResult } from "../upstreams/reencrypt.js";

/**
 * Key rotation for customer secrets (docs/decisions/0140, 0141): byok instance
 * keys and connected account secrets, re-sealed under the current key like
 * upstream keys, without touching versions or timestamps.
 */
export async function reencryptCustomerSecrets({
  ctx,
}: {
  ctx: Pick<ManagedAiContext, "keyring" | "logger"> & { store: Pick<Store, "instances" | "accounts"> };
}): Promise<ReencryptResult> {
  const { instances, accounts } = ctx.store;
  const a = await resealRows(ctx.keyring, ctx.logger, "instance", await instances.sealedKeys(), (row) => instanceKeyContext(row.id), instances.replaceKey);
  const b = await resealRows(
    ctx.keyring,
    ctx.logger,
    "account",
    await accounts.sealedSecrets(),
    (row) => connectedAccountContext(row.id),
    accounts.replaceSecret,
  );
  return addReseal(a, b);
}
