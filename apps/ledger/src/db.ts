import type pg from "pg";
import { createPool, poolAdapter } from "@gateway/db-kit";
import { PrismaClient } from "./generated/prisma/client.js";

export type LedgerDatabase = { prisma: PrismaClient; pool: pg.Pool };

/** Prisma over the service's pool (the runtime opens it; movements use the pool directly). */
export function prismaFor(pool: pg.Pool): PrismaClient {
  return new PrismaClient({ adapter: poolAdapter(pool) });
}

/** A pool and Prisma on it, for the tests and the benchmark; `prisma.$disconnect()` ends both. */
export function createDatabase(url: string, poolSize: number): LedgerDatabase {
  const pool = createPool(url, { poolSize });
  return { prisma: prismaFor(pool), pool };
}
