import type { UsageRows } from "../domain/ports.js";
import type { PrismaClient } from "../generated/prisma/client.js";
import { prismaTx } from "./prisma-tx.js";

/**
 * The usage records' reads and an operator's decision (port UsageRows, domain/ports.ts):
 * Prisma's calls on `usage_records`, whose rows are the domain's `UsageRecord`
 * (domain/rows.ts). The hot path's opens and settlements are usage-records.ts's.
 */
export function usageRows(prisma: PrismaClient): Omit<UsageRows, "events"> {
  return {
    get: (id) => prisma.usageRecord.findUnique({ where: { id } }),
    byIds: (ids) => prisma.usageRecord.findMany({ where: { id: { in: ids } } }),
    seqOf: async (id, tenantId) =>
      (await prisma.usageRecord.findFirst({ where: { id, ...(tenantId ? { tenantId } : {}) }, select: { seq: true } }))?.seq ?? null,
    page: ({ tenantId, mode, before, take }) =>
      prisma.usageRecord.findMany({
        where: { ...(tenantId ? { tenantId } : {}), ...(mode ? { mode } : {}), ...(before !== null ? { seq: { lt: before } } : {}) },
        orderBy: { seq: "desc" },
        take,
      }),
    completedWithoutHold: (ids) => prisma.usageRecord.findMany({ where: { id: { in: ids }, status: "completed", holdId: null } }),
    decide: async (tx, id, status, decision) => (await prismaTx(tx).usageRecord.updateMany({ where: { id, status }, data: decision })).count > 0,
    capturesCheckpoint: () => prisma.reconcilerCheckpoint.findUnique({ where: { name: "captures" } }),
  };
}
