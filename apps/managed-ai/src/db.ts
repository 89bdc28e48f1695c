import { poolAdapter } from "@gateway/db-kit";
import type { Statements, Transact } from "@gateway/events";
import type { Logger } from "@gateway/logger";
import type { Allotments } from "./domain/allotments/allotments.js";
import type { CatalogCache } from "./storage/catalog-cache.js";
import type { LedgerCalls } from "@gateway/ledger-client";
import type { UsageRecordWriter } from "./storage/usage-records.js";
import type { ProviderClient } from "./providers/openai.js";
import type { Keyring } from "./crypto/keyring.js";
import type { AiMetrics } from "./metrics/ai-metrics.js";
import { PrismaClient, type Prisma } from "./generated/prisma/client.js";

export type Tx = Prisma.TransactionClient;

/** What domain verbs get: the service's collaborators, passed in (tests hand in real ones). */
export type ManagedAiContext = {
  prisma: PrismaClient;
  transact: Transact<Tx>;
  logger: Logger;
  /** Seals and opens provider credentials. */
  keyring: Keyring;
  /** The longest an upstream connection test waits for an answer. */
  upstreamTestTimeoutMs: number;
  /** HTTP client for provider calls (the global fetch unless a test hands in another). */
  fetch: typeof fetch;
  /**
   * The one door to the ledger: movements (concurrent ones pipelined as batches),
   * reads of holds and transfers, and the allotments' charges.
   */
  ledgerCalls: LedgerCalls;
  /** Chat completions at the providers. */
  provider: ProviderClient;
  /** How long a hold lasts before an operator may release it (HOLD_TTL_SECONDS). */
  holdTtlSeconds: number;
  /** Instances, models, prices and offers as invocations read them (cached). */
  catalog: CatalogCache;
  /** Single statements in plain SQL on the same connections (a change and its events at once), for the invocation hot path. */
  sql: Statements;
  /** Opens and settlements of usage records, group-committed. */
  records: UsageRecordWriter;
  /** Tenants' allotments in the ledger, and the batched posting of charges from them (docs/decisions/0028). */
  allotments: Allotments;
  /** The operations metrics of AI calls (docs/decisions/0211); absent: none kept. */
  metrics?: AiMetrics;
};

/** The service's Prisma client, on the pool the runtime opened (shared with its plain-SQL paths). */
export function createPrisma(pool: Parameters<typeof poolAdapter>[0]): PrismaClient {
  return new PrismaClient({ adapter: poolAdapter(pool) });
}
