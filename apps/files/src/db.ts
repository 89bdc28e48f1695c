import { poolAdapter } from "@gateway/db-kit";
import { PrismaClient } from "./generated/prisma/client.js";

/** The service's Prisma client, on the pool the runtime opened (shared with its plain-SQL paths). */
export function createPrisma(pool: Parameters<typeof poolAdapter>[0]): PrismaClient {
  return new PrismaClient({ adapter: poolAdapter(pool) });
}
