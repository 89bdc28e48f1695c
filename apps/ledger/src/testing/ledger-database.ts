import { fileURLToPath } from "node:url";
import pg from "pg";
import { connectionConfig } from "@gateway/db-kit";
import { createLogger } from "@gateway/logger";
import { prismaFor } from "../db.js";
import type { LedgerContext } from "../domain/context.js";
import { poolMovements } from "../domain/movement-queue.js";
import { catalogChecked, freshDatabase } from "@gateway/testkit";

export const SERVER_URL = process.env.DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
export const PRISMA_DIR = fileURLToPath(new URL("../../prisma", import.meta.url));

export type TestLedger = {
  ctx: LedgerContext;
  /** How often the ledger woke the relay (once per committed movement). */
  kicks(): number;
  /** SQL against the test database. */
  sql<T = Record<string, unknown>>(text: string, ...values: unknown[]): Promise<T[]>;
  /** A movement's journal legs (view entries), in leg order. */
  legs(entryId: string): Promise<{ account: string; units: bigint }[]>;
  /** The ledger's events (its transfers, view ledger_events; no relay runs here), each checked against the event catalog. */
  events(type?: string): Promise<{ id: string; type: string; payload: Record<string, unknown>; request_id: string | null }[]>;
  close(): Promise<void>;
};

/**
 * A ledger on its own, freshly migrated database (gw_test_ledger_<random>),
 * dropped again by `close`. No relay publishes (the events are the transfers,
 * view ledger_events); the ledger's wake-ups of the relay are counted.
 */
export async function openTestLedger(options: { poolSize?: number } = {}): Promise<TestLedger> {
  const db = await freshDatabase({ prefix: "gw_test_ledger", prismaDir: PRISMA_DIR, serverUrl: SERVER_URL, poolSize: options.poolSize ?? 10 });
  const { pool } = db;
  const prisma = prismaFor(pool);
  const sql = <T>(text: string, ...values: unknown[]) => prisma.$queryRawUnsafe<T[]>(text, ...values);
  let kicks = 0;
  const relay = {
    kick() {
      kicks++;
    },
  };
  return {
    ctx: { prisma, pool, relay, movements: poolMovements(pool, relay), logger: createLogger({ service: "ledger-test", level: "silent" }) },
    kicks: () => kicks,
    sql,
    legs: (entryId) => sql<{ account: string; units: bigint }>("SELECT account, units FROM entries WHERE transfer_id = $1 ORDER BY leg", entryId),
    async events(type) {
      return catalogChecked(
        await sql<{ id: string; type: string; payload: Record<string, unknown>; request_id: string | null }>(
          "SELECT id, type, payload, request_id FROM ledger_events WHERE $1::text IS NULL OR type = $1 ORDER BY seq",
          type ?? null,
        ),
      );
    },
    async close() {
      await prisma.$disconnect();
      await db.drop();
    },
  };
}

/** A single connection on a test database of its own (see `openLedgerConnection`). */
export type LedgerConnection = { client: pg.Client; close(): Promise<void> };

/**
 * One connection of a test's own on a freshly migrated ledger database (`<prefix>_<random>`),
 * for tests that watch a single session (its notices, its plans); `close` ends it and drops the database.
 */
export async function openLedgerConnection(prefix: string): Promise<LedgerConnection> {
  const db = await freshDatabase({ prefix, prismaDir: PRISMA_DIR, serverUrl: SERVER_URL, poolSize: 1 });
  const client = new pg.Client(connectionConfig(db.url));
  await client.connect();
  return {
    client,
    async close() {
      await client.end();
      await db.drop();
    },
  };
}
