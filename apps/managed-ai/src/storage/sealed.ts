import type { ReplaceSealed } from "../domain/ports.js";

/**
 * Writes a re-sealed API key back into its row (`apiKeyCiphertext`, `apiKeyKeyId`) by
 * compare-and-set, `updated_at` kept: a rotation through the API in the meantime wins.
 * For upstreams and byok instances alike (their columns are named the same).
 */
export function replaceApiKey(
  updateMany: (args: {
    where: { id: string; apiKeyKeyId: string; apiKeyCiphertext: Uint8Array<ArrayBuffer> };
    data: { apiKeyCiphertext: Uint8Array<ArrayBuffer>; apiKeyKeyId: string; updatedAt: Date };
  }) => Promise<{ count: number }>,
): ReplaceSealed {
  return async (row, sealed) =>
    (
      await updateMany({
        where: { id: row.id, apiKeyKeyId: row.keyId, apiKeyCiphertext: row.ciphertext },
        data: { apiKeyCiphertext: sealed.ciphertext, apiKeyKeyId: sealed.keyId, updatedAt: row.updatedAt },
      })
    ).count === 1;
}
