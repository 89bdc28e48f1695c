import type { AllotmentRows } from "../domain/ports.js";
import type { PrismaClient } from "../generated/prisma/client.js";

/**
 * The allotments' reads of the closing and the carve (port AllotmentRows, domain/ports.ts):
 * Prisma's calls on `allotments`, whose rows are the domain's `Allotment` (domain/rows.ts).
 * The allotments' statements (claims, posts, the closing's writes) are allotments.ts's.
 */
export function allotmentReads(prisma: PrismaClient): Pick<AllotmentRows, "get" | "staleOpenings" | "dueClosings"> {
  return {
    get: (id) => prisma.allotment.findUnique({ where: { id } }),
    staleOpenings: (limit) =>
      prisma.allotment.findMany({
        where: { state: "opening", createdAt: { lt: new Date(Date.now() - 60_000) }, nextCheckAt: { lte: new Date() } },
        orderBy: { nextCheckAt: "asc" },
        take: limit,
      }),
    dueClosings: (limit) =>
      prisma.allotment.findMany({
        where: { state: "closing", nextCheckAt: { lte: new Date() } },
        orderBy: { nextCheckAt: "asc" },
        take: limit,
      }),
  };
}
