import { randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";
import { dropDatabase, prepareDatabase } from "@gateway/db-kit";
import { validateData, isEventType } from "@gateway/events";
import { createLogger } from "@gateway/logger";
import { createDatabase } from "../db.js";
import type { LedgerContext } from "../domain/context.js";
import { poolMovements } from "../domain/movement-queue.js";

export const SERVER_URL = process.env.DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
export const PRISMA_DIR = fileURLToPath(new URL("../../prisma", import.meta.url));

export type TestLedger = {
  ctx: LedgerContext;
  /** How often the ledger woke the relay (once per committed movement). */
  kicks(): number;
  /** SQL against the test database. */
  sql<T = Record<string, unknown>>(text: string, ...values: unknown[]): Promise<T[]>;
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
  const name = `gw_test_ledger_${randomBytes(4).toString("hex")}`;
  const url = await prepareDatabase({
    serverUrl: SERVER_URL,
    name,
    schemaPath: `${PRISMA_DIR}/schema.prisma`,
    migrationsDir: `${PRISMA_DIR}/migrations`,
    migrate: true,
  });
  const { prisma, pool } = createDatabase(url, options.poolSize ?? 10);
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
    async events(type) {
      const rows = await sql<{ id: string; type: string; payload: Record<string, unknown>; request_id: string | null }>(
        "SELECT id, type, payload, request_id FROM ledger_events WHERE $1::text IS NULL OR type = $1 ORDER BY seq",
        type ?? null,
      );
      for (const row of rows) {
        if (!isEventType(row.type)) throw new Error(`unknown event type ${row.type}`);
        validateData(row.type, row.payload as never);
      }
      return rows;
    },
    async close() {
      await prisma.$disconnect();
      await dropDatabase(SERVER_URL, name);
    },
  };
}
