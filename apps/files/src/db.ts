import { poolAdapter } from "@gateway/db-kit";
import type { Transact } from "@gateway/events";
import { PrismaClient, type Prisma } from "./generated/prisma/client.js";

export type Tx = Prisma.TransactionClient;

export type FilesContext = {
  prisma: PrismaClient;
  transact: Transact<Tx>;
};

/** The service's Prisma client, on the pool the runtime opened (shared with its plain-SQL paths). */
export function createPrisma(pool: Parameters<typeof poolAdapter>[0]): PrismaClient {
  return new PrismaClient({ adapter: poolAdapter(pool) });
}
