import { poolAdapter } from "@gateway/db-kit";
import type { Transact } from "@gateway/events-runtime";
import { PrismaClient, type Prisma } from "./generated/prisma/client.js";

export type Tx = Prisma.TransactionClient;
export type { PrismaClient };

/** The service's Prisma client, on the pool the runtime opened (shared with its plain-SQL paths). */
export function createPrisma(pool: Parameters<typeof poolAdapter>[0]): PrismaClient {
  return new PrismaClient({ adapter: poolAdapter(pool) });
}

export type Db = {
  prisma: PrismaClient;
  transact: Transact<Tx>;
};
