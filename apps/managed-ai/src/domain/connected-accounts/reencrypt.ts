import type { ManagedAiContext } from "../../db.js";
import { connectedAccountContext, instanceKeyContext, openCredential, sealCredential, type SealedCredential } from "../../crypto/credentials.js";
import type { ReencryptResult } from "../upstreams/reencrypt.js";

type Sealed = { id: string; ciphertext: Uint8Array<ArrayBuffer>; keyId: string };

/** Re-seals each row not under the current key; `replace` is a compare-and-set (a concurrent write wins). */
async function reseal(
  ctx: Pick<ManagedAiContext, "keyring" | "logger">,
  what: string,
  rows: Sealed[],
  context: (id: string) => string,
  replace: (row: Sealed, sealed: SealedCredential) => Promise<boolean>,
): Promise<ReencryptResult> {
  const result: ReencryptResult = { reencrypted: 0, current: 0, failed: [] };
  for (const row of rows) {
    if (row.keyId === ctx.keyring.currentId) {
      result.current += 1;
      continue;
    }
    let sealed: SealedCredential;
    try {
      sealed = sealCredential(ctx.keyring, openCredential(ctx.keyring, { ciphertext: row.ciphertext, keyId: row.keyId }, context(row.id)), context(row.id));
    } catch (err) {
      ctx.logger.error({ [`${what}_id`]: row.id, key_id: row.keyId, reason: (err as Error).message }, `${what} secret not re-encrypted`);
      result.failed.push(row.id);
      continue;
    }
    if (await replace(row, sealed)) {
      result.reencrypted += 1;
      ctx.logger.info({ [`${what}_id`]: row.id, from_key_id: row.keyId, to_key_id: sealed.keyId }, `${what} secret re-encrypted`);
    }
  }
  return result;
}

/**
 * Key rotation for customer secrets (docs/decisions/0140, 0141): byok instance
 * keys and connected account secrets, re-sealed under the current key like
 * upstream keys, without touching versions or timestamps.
 */
export async function reencryptCustomerSecrets({ ctx }: { ctx: Pick<ManagedAiContext, "prisma" | "keyring" | "logger"> }): Promise<ReencryptResult> {
  const instances = await ctx.prisma.serviceInstance.findMany({
    where: { apiKeyKeyId: { not: null } },
    select: { id: true, apiKeyCiphertext: true, apiKeyKeyId: true, updatedAt: true },
    orderBy: { id: "asc" },
  });
  const a = await reseal(
    ctx,
    "instance",
    instances.map((r) => ({ id: r.id, ciphertext: r.apiKeyCiphertext!, keyId: r.apiKeyKeyId! })),
    instanceKeyContext,
    async (row, sealed) =>
      (
        await ctx.prisma.serviceInstance.updateMany({
          where: { id: row.id, apiKeyKeyId: row.keyId, apiKeyCiphertext: row.ciphertext },
          data: { apiKeyCiphertext: sealed.ciphertext, apiKeyKeyId: sealed.keyId, updatedAt: instances.find((i) => i.id === row.id)!.updatedAt },
        })
      ).count === 1,
  );
  const accounts = await ctx.prisma.connectedAccount.findMany({ select: { id: true, secretCiphertext: true, secretKeyId: true }, orderBy: { id: "asc" } });
  const b = await reseal(
    ctx,
    "account",
    accounts.map((r) => ({ id: r.id, ciphertext: r.secretCiphertext, keyId: r.secretKeyId })),
    connectedAccountContext,
    async (row, sealed) =>
      (
        await ctx.prisma.connectedAccount.updateMany({
          where: { id: row.id, secretKeyId: row.keyId, secretCiphertext: row.ciphertext },
          data: { secretCiphertext: sealed.ciphertext, secretKeyId: sealed.keyId },
        })
      ).count === 1,
  );
  return { reencrypted: a.reencrypted + b.reencrypted, current: a.current + b.current, failed: [...a.failed, ...b.failed] };
}
