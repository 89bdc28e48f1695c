import type { InstanceRows } from "../domain/ports.js";
import type { PrismaClient } from "../generated/prisma/client.js";
import { prismaTx } from "./prisma-tx.js";
import { replaceApiKey } from "./sealed.js";

/**
 * Tenants' ai-model instances (port InstanceRows, domain/ports.ts): Prisma's calls on
 * `service_instances`, whose rows are the domain's `ServiceInstance` (domain/rows.ts).
 */
export function instanceRows(prisma: PrismaClient): InstanceRows {
  return {
    list: (tenantId) => prisma.serviceInstance.findMany({ where: { tenantId }, orderBy: [{ createdAt: "desc" }, { id: "desc" }], take: 200 }),
    get: (tenantId, alias) => prisma.serviceInstance.findUnique({ where: { tenantId_serviceId_alias: { tenantId, serviceId: "ai-model", alias } } }),
    create: (tx, { id, tenantId, alias, ...data }) =>
      prismaTx(tx).serviceInstance.create({ data: { id, tenantId, serviceId: "ai-model", alias, ...data, version: 1 } }),
    update: (tx, id, data) => prismaTx(tx).serviceInstance.update({ where: { id }, data: { ...data, version: { increment: 1 } } }),
    usingAccount: (tx, tenantId, accountId) =>
      prismaTx(tx).serviceInstance.findFirst({ where: { tenantId, connectedAccountId: accountId }, select: { serviceId: true, alias: true } }),
    sealedKeys: async () =>
      (
        await prisma.serviceInstance.findMany({
          where: { apiKeyKeyId: { not: null } },
          select: { id: true, apiKeyCiphertext: true, apiKeyKeyId: true, updatedAt: true },
          orderBy: { id: "asc" },
        })
      ).map((r) => ({ id: r.id, ciphertext: r.apiKeyCiphertext!, keyId: r.apiKeyKeyId!, updatedAt: r.updatedAt })),
    replaceKey: replaceApiKey((args) => prisma.serviceInstance.updateMany(args)),
  };
}
