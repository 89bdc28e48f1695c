import { poolAdapter } from "@gateway/db-kit";
import { type Prisma, PrismaClient } from "./generated/prisma/client.js";

/** A transaction of the service's Prisma client (the domain knows it as its opaque `Tx`, storage/prisma-tx.ts). */
export type PrismaTx = Prisma.TransactionClient;

/** The service's Prisma client, on the pool the runtime opened (shared with its plain-SQL paths). */
export function createPrisma(pool: Parameters<typeof poolAdapter>[0]): PrismaClient {
  return new PrismaClient({ adapter: poolAdapter(pool) });
}
