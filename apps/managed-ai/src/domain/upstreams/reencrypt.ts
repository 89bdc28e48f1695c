import type { ManagedAiContext } from "../../db.js";
import { openCredential, sealCredential, upstreamKeyContext } from "../../crypto/credentials.js";

export type ReencryptResult = {
  /** Credentials now sealed with the current key that were not before. */
  reencrypted: number;
  /** Credentials already under the current key. */
  current: number;
  /** Upstream ids whose credential could not be opened (key missing or data damaged). */
  failed: string[];
};

/**
 * Key rotation, last step: re-seals every stored credential that is not under
 * the keyring's current key, so older keys can then be removed from
 * ENCRYPTION_KEYS (docs/decisions/0015). Safe to run while the service runs and
 * to run again: each row is replaced only if it still holds what was read, and
 * neither its version nor its updated_at changes (the credential is the same).
 */
export async function reencryptUpstreamKeys({ ctx }: { ctx: Pick<ManagedAiContext, "prisma" | "keyring" | "logger"> }): Promise<ReencryptResult> {
  const rows = await ctx.prisma.upstream.findMany({
    where: { apiKeyKeyId: { not: null } },
    select: { id: true, apiKeyCiphertext: true, apiKeyKeyId: true, updatedAt: true },
    orderBy: { id: "asc" },
  });
  const result: ReencryptResult = { reencrypted: 0, current: 0, failed: [] };
  for (const row of rows) {
    if (!row.apiKeyCiphertext || !row.apiKeyKeyId) continue;
    if (row.apiKeyKeyId === ctx.keyring.currentId) {
      result.current += 1;
      continue;
    }
    const context = upstreamKeyContext(row.id);
    let sealed;
    try {
      sealed = sealCredential(ctx.keyring, openCredential(ctx.keyring, { ciphertext: row.apiKeyCiphertext, keyId: row.apiKeyKeyId }, context), context);
    } catch (err) {
      ctx.logger.error({ upstream_id: row.id, key_id: row.apiKeyKeyId, reason: (err as Error).message }, "credential not re-encrypted");
      result.failed.push(row.id);
      continue;
    }
    // Compare-and-set: a rotation through the API in the meantime wins.
    const replaced = await ctx.prisma.upstream.updateMany({
      where: { id: row.id, apiKeyKeyId: row.apiKeyKeyId, apiKeyCiphertext: row.apiKeyCiphertext },
      data: { apiKeyCiphertext: sealed.ciphertext, apiKeyKeyId: sealed.keyId, updatedAt: row.updatedAt },
    });
    if (replaced.count === 1) {
      result.reencrypted += 1;
      ctx.logger.info({ upstream_id: row.id, from_key_id: row.apiKeyKeyId, to_key_id: sealed.keyId }, "credential re-encrypted");
    }
  }
  return result;
}
