import { AppError } from "@gateway/errors";
import { CredentialError, instanceKeyContext, openCredential } from "../credentials.js";
import type { ManagedAiContext } from "../context.js";
import type { ServiceInstance } from "../rows.js";
import type { Egress } from "./provider.js";
import { openAccount } from "../connected-accounts/reveal.js";
import { configOf } from "../instances/view.js";

export type ProviderTarget = { baseUrl: string; apiKey: string; egress: Egress };

/**
 * Where a bring-your-own-key instance's calls go and with which key: the
 * customer's base URL (a customer egress: checked and pinned at connect) and
 * the instance's sealed key or its connected account's secret. A credential
 * that cannot be opened or an account that is gone is a configuration problem
 * (503), never a provider call without a key.
 */
export async function byokTarget({ ctx, input: { instance: row } }: { ctx: ManagedAiContext; input: { instance: ServiceInstance } }): Promise<ProviderTarget> {
  const config = configOf(row);
  if (config.mode !== "byok") throw new Error("byokTarget on a managed instance");
  const target = (apiKey: string): ProviderTarget => ({ baseUrl: config.base_url, apiKey, egress: "customer" });
  if (row.connectedAccountId) {
    const account = await ctx.catalog.account(row.tenantId, row.connectedAccountId);
    if (!account) throw new AppError("unavailable", `The instance ${row.alias} refers to a connected account that no longer exists.`);
    return target(openAccount(ctx, account).secret);
  }
  if (!row.apiKeyCiphertext || !row.apiKeyKeyId) throw new AppError("unavailable", `The instance ${row.alias} has no provider key.`);
  try {
    return target(openCredential(ctx.keyring, { ciphertext: row.apiKeyCiphertext, keyId: row.apiKeyKeyId }, instanceKeyContext(row.id)));
  } catch (err) {
    if (!(err instanceof CredentialError)) throw err;
    ctx.logger.error({ instance_id: row.id, key_id: row.apiKeyKeyId }, "instance provider key cannot be opened with ENCRYPTION_KEYS");
    throw new AppError("unavailable", `The instance ${row.alias} has no usable provider key right now.`);
  }
}
