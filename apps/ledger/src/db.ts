import type pg from "pg";
import type { Logger } from "@gateway/logger";
import { createPool, poolAdapter } from "@gateway/db-kit";
import type { MovementQueue } from "./domain/movement-queue.js";
import { PrismaClient, type Prisma } from "./generated/prisma/client.js";

export type Tx = Prisma.TransactionClient;

export type LedgerContext = {
  /** Reads (balances, holds, entries, the invariant check). */
  prisma: PrismaClient;
  /**
   * The same connections, for the movement functions: a plain pg query costs
   * the ledger markedly less CPU than Prisma's raw query (docs/benchmarks/ledger.md).
   * int64 columns arrive as bigint.
   */
  pool: pg.Pool;
  /**
   * The relay that publishes the journal's rows as events (LogRelay over the view
   * ledger_events, decision 0161), woken after a movement committed. No outbox rows.
   */
  relay: { kick(): void };
  /** Reserves, captures and voids, group-committed (src/domain/movement-queue.ts). */
  movements: MovementQueue;
  logger: Logger;
};

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
