import type { ConnectedAccountRows } from "../domain/ports.js";
import type { PrismaClient } from "../generated/prisma/client.js";
import { prismaTx } from "./prisma-tx.js";

/** What the service answers of an account: never the secret nor its ciphertext. */
const ACCOUNT_COLUMNS = { id: true, tenantId: true, provider: true, name: true, createdAt: true } as const;

/**
 * Tenants' connected accounts (port ConnectedAccountRows, domain/ports.ts): Prisma's
 * calls on `connected_accounts`, whose rows are the domain's `ConnectedAccount`.
 */
export function connectedAccountRows(prisma: PrismaClient): ConnectedAccountRows {
  return {
    list: (tenantId) =>
      prisma.connectedAccount.findMany({ where: { tenantId }, select: ACCOUNT_COLUMNS, orderBy: [{ createdAt: "desc" }, { id: "desc" }], take: 200 }),
    get: (tenantId, id) => prisma.connectedAccount.findFirst({ where: { id, tenantId } }),
    provider: async (tx, tenantId, id) =>
      (await prismaTx(tx).connectedAccount.findFirst({ where: { id, tenantId }, select: { provider: true } }))?.provider ?? null,
    create: (tx, data) => prismaTx(tx).connectedAccount.create({ data, select: ACCOUNT_COLUMNS }),
    delete: async (tx, id) => {
      await prismaTx(tx).connectedAccount.delete({ where: { id } });
    },
    sealedSecrets: async () =>
      (await prisma.connectedAccount.findMany({ select: { id: true, secretCiphertext: true, secretKeyId: true }, orderBy: { id: "asc" } })).map((r) => ({
        id: r.id,
        ciphertext: r.secretCiphertext,
        keyId: r.secretKeyId,
      })),
    replaceSecret: async (row, sealed) =>
      (
        await prisma.connectedAccount.updateMany({
          where: { id: row.id, secretKeyId: row.keyId, secretCiphertext: row.ciphertext },
          data: { secretCiphertext: sealed.ciphertext, secretKeyId: sealed.keyId },
        })
      ).count === 1,
  };
}
