import { randomBytes } from "node:crypto";
import { Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import type { createPool } from "@gateway/db-kit";
import { createTransact, poolStatements } from "@gateway/events-runtime";
import { createClient } from "@gateway/grpc-kit";
import { createLogger } from "@gateway/logger";
import { ledgerV1 } from "@gateway/protos";
import { parseKeyring } from "../crypto/keyring.js";
import { createPrisma } from "../db.js";
import type { ManagedAiContext } from "../domain/context.js";
import type { PrismaClient } from "../generated/prisma/client.js";
import { domainTransact, type PrismaTx } from "../storage/prisma-tx.js";
import { Allotments, type AllotmentOptions } from "../storage/allotments.js";
import { chargesRefused } from "../domain/usage/move.js";
import { CatalogCache, invalidating } from "../storage/catalog-cache.js";
import { LedgerCalls } from "@gateway/ledger-client";
import { sqlStore } from "../storage/store.js";
import { UsageRecordWriter } from "../storage/usage-records.js";
import { ProviderClient } from "../providers/openai.js";
import { freshDatabase } from "@gateway/testkit";

const PRISMA_DIR = fileURLToPath(new URL("../../prisma", import.meta.url));

/** Two keys for tests: `k2` current, `k1` decrypt-only. */
export const KEY_1 = `k1:${randomBytes(32).toString("base64")}`;
export const KEY_2 = `k2:${randomBytes(32).toString("base64")}`;

/**
 * A test's context: its catalog is the real cache (tests read and flush it), and the
 * Prisma client under its store, for tests that set up or look at rows directly.
 */
export type TestManagedAiContext = ManagedAiContext & { catalog: CatalogCache; prisma: PrismaClient };

export type TestContext = {
  ctx: TestManagedAiContext;
  /** The connections under ctx (the reconciler's advisory lock takes one of its own). */
  pool: ReturnType<typeof createPool>;
  /** Every log line written through ctx.logger, parsed. */
  logs: Record<string, unknown>[];
  /** Events written (the outbox and the usage records' log; no relay runs in domain tests), in order. */
  outbox(): Promise<{ type: string; payload: Record<string, unknown> }[]>;
  close(): Promise<void>;
};

/**
 * A managed-ai context on its own freshly migrated database (dropped by
 * `close`): real PostgreSQL, real transactions and outbox, a captured logger.
 */
export async function createTestContext(
  overrides: Partial<ManagedAiContext> & { catalog?: CatalogCache } = {},
  options: { catalogTtlMs?: number; allotments?: Partial<AllotmentOptions> } = {},
): Promise<TestContext> {
  const db = await freshDatabase({ prefix: "gw_test_mai", prismaDir: PRISMA_DIR });
  const { pool } = db;
  const prisma = createPrisma(pool);
  const logs: Record<string, unknown>[] = [];
  const logger = createLogger({
    service: "managed-ai",
    level: "debug",
    destination: new Writable({
      write(chunk, _enc, cb) {
        for (const line of String(chunk).split("\n")) if (line) logs.push(JSON.parse(line) as Record<string, unknown>);
        cb();
      },
    }),
  });
  const sql = poolStatements(pool);
  // Administration tests never reach the ledger; a call here fails fast as unavailable.
  const ledger = overrides.ledgerCalls ? null : createClient(ledgerV1, "127.0.0.1:1", { deadlineMs: 500, name: "ledger (none in domain tests)" });
  // As in production: every committed Prisma write empties the catalog cache (no caching unless a test asks).
  const catalog = overrides.catalog ?? new CatalogCache(prisma, options.catalogTtlMs ?? 0);
  const base: Omit<ManagedAiContext, "allotments"> = {
    transact: domainTransact(createTransact<PrismaTx>((fn) => prisma.$transaction(fn, { timeout: 15_000, maxWait: 10_000 }))),
    writeCatalog: invalidating(domainTransact(createTransact<PrismaTx>((fn) => prisma.$transaction(fn, { timeout: 15_000, maxWait: 10_000 }))), catalog),
    logger,
    keyring: parseKeyring(`${KEY_2},${KEY_1}`),
    upstreamTestTimeoutMs: 1_000,
    fetch: globalThis.fetch,
    ledgerCalls: overrides.ledgerCalls ?? new LedgerCalls(ledger!, logger),
    provider: new ProviderClient({ headersMs: 5_000, idleMs: 5_000 }),
    holdTtlSeconds: 900,
    catalog,
    sql,
    records: new UsageRecordWriter(sql, logger, undefined),
    store: sqlStore(overrides.sql ?? sql, prisma),
    ...overrides,
  };
  // Off unless a test asks: a hold per request, as the tests of holds expect.
  const allotments =
    overrides.allotments ??
    new Allotments(
      { sql: base.sql, ledgerCalls: base.ledgerCalls, logger, refused: (ids) => chargesRefused({ ctx, input: { requestIds: ids } }) },
      { enabled: false, sharePercent: 25, maxUnits: 1_000_000n, minUnits: 1_000n, lingerMs: 0, holdTtlSeconds: 3_600, ...options.allotments },
    );
  const ctx: TestManagedAiContext = { ...base, catalog, allotments, prisma };
  return {
    ctx,
    pool,
    logs,
    // The outbox and the usage records' log (docs/decisions/0205), in the order they were written.
    outbox: async () =>
      (
        await pool.query<{ type: string; payload: Record<string, unknown> }>(
          `SELECT type, payload FROM (
             SELECT type, payload, created_at, 0 AS source, seq, id FROM usage_record_events
             UNION ALL SELECT type, payload, created_at, 1, seq, id FROM outbox_events) e
           ORDER BY created_at, source, seq, id`,
        )
      ).rows,
    async close() {
      ledger?.close();
      await ctx.provider.close();
      await prisma.$disconnect();
      await db.drop();
    },
  };
}

/**
 * Another replica of managed-ai on the same database and ledger: its own in-memory
 * state (allotments' queues and openings, group commits), as a second process has.
 * `overrides` replaces collaborators (a ledger door with injected pauses, a records
 * writer that fails).
 */
export function replicaOf(
  base: ManagedAiContext,
  options: { overrides?: Partial<Omit<ManagedAiContext, "allotments">>; allotments?: Partial<AllotmentOptions> } = {},
): ManagedAiContext {
  const ledgerCalls = options.overrides?.ledgerCalls ?? base.ledgerCalls;
  const records = options.overrides?.records ?? new UsageRecordWriter(base.sql, base.logger, undefined);
  const ctx: ManagedAiContext = {
    ...base,
    ...options.overrides,
    ledgerCalls,
    records,
    allotments: new Allotments(
      { sql: base.sql, ledgerCalls, logger: base.logger, refused: (ids) => chargesRefused({ ctx, input: { requestIds: ids } }) },
      { ...base.allotments.options, ...options.allotments },
    ),
  };
  return ctx;
}
