import type { ManagedAiContext } from "../context.js";
import { addReseal, resealRows } from "@gateway/secrets";
import { connectedAccountContext, instanceKeyContext } from "../credentials.js";
import { replaceApiKey, type ReencryptResult } from "../upstreams/reencrypt.js";

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
  const a = await resealRows(
    ctx.keyring,
    ctx.logger,
    "instance",
    instances.map((r) => ({ id: r.id, ciphertext: r.apiKeyCiphertext!, keyId: r.apiKeyKeyId!, updatedAt: r.updatedAt })),
    (row) => instanceKeyContext(row.id),
    replaceApiKey((args) => ctx.prisma.serviceInstance.updateMany(args)),
  );
  const accounts = await ctx.prisma.connectedAccount.findMany({ select: { id: true, secretCiphertext: true, secretKeyId: true }, orderBy: { id: "asc" } });
  const b = await resealRows(
    ctx.keyring,
    ctx.logger,
    "account",
    accounts.map((r) => ({ id: r.id, ciphertext: r.secretCiphertext, keyId: r.secretKeyId })),
    (row) => connectedAccountContext(row.id),
    async (row, sealed) =>
      (
        await ctx.prisma.connectedAccount.updateMany({
          where: { id: row.id, secretKeyId: row.keyId, secretCiphertext: row.ciphertext },
          data: { secretCiphertext: sealed.ciphertext, secretKeyId: sealed.keyId },
        })
      ).count === 1,
  );
  return addReseal(a, b);
}
