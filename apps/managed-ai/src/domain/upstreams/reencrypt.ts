import type { ManagedAiContext } from "../context.js";
import { resealRows, type ResealResult } from "@gateway/secrets";
import { upstreamKeyContext } from "../credentials.js";

/** Re-sealed now, already current, and the ids whose credential could not be opened (key missing or data damaged). */
export type ReencryptResult = ResealResult;

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
  const sealedRows = rows.flatMap((r) =>
    r.apiKeyCiphertext && r.apiKeyKeyId ? [{ id: r.id, ciphertext: r.apiKeyCiphertext, keyId: r.apiKeyKeyId, updatedAt: r.updatedAt }] : [],
  );
  return resealRows(
    ctx.keyring,
    ctx.logger,
    "upstream",
    sealedRows,
    (row) => upstreamKeyContext(row.id),
    // Compare-and-set: a rotation through the API in the meantime wins.
    async (row, sealed) =>
      (
        await ctx.prisma.upstream.updateMany({
          where: { id: row.id, apiKeyKeyId: row.keyId, apiKeyCiphertext: row.ciphertext },
          data: { apiKeyCiphertext: sealed.ciphertext, apiKeyKeyId: sealed.keyId, updatedAt: row.updatedAt },
        })
      ).count === 1,
  );
}
