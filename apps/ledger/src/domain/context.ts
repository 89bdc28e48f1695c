import type pg from "pg";
import type { Logger } from "@gateway/logger";
import type { Prisma, PrismaClient } from "../generated/prisma/client.js";
import type { MovementQueue } from "./movement-queue.js";

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
