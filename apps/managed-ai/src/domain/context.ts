import type { Statements, Transact } from "@gateway/events-runtime";
import type { LedgerCalls } from "@gateway/ledger-client";
import type { Logger } from "@gateway/logger";
import type { Keyring } from "@gateway/secrets";
import type { AllotmentPool, CatalogReads, InvocationMetrics, Provider, RecordWrites, Store, Tx } from "./ports.js";

export type { Tx };

/**
 * What domain verbs get: the service's collaborators, passed in (tests hand in real ones).
 * Each is a port the domain declares (ports.ts); wiring.ts builds it from the adapters.
 */
export type ManagedAiContext = {
  /** A transaction whose events are emitted with it (the outbox), for everything but the catalog. */
  transact: Transact<Tx>;
  /**
   * The same for writes of the catalog (upstreams, models, prices, offers, instances,
   * connected accounts): after each commit every replica's catalog cache is emptied.
   */
  writeCatalog: Transact<Tx>;
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
  provider: Provider;
  /** How long a hold lasts before an operator may release it (HOLD_TTL_SECONDS). */
  holdTtlSeconds: number;
  /** Instances, models, prices and offers as invocations read them (cached). */
  catalog: CatalogReads;
  /** Single statements in plain SQL on the same connections (a change and its events at once), for the invocation hot path. */
  sql: Statements;
  /** Opens and settlements of usage records, group-committed. */
  records: RecordWrites;
  /**
   * Every read and write of the tables but the hot path's (storage/, through the Store
   * port): the catalog's rows and locks, the records, budgets, reconciler, retention and
   * allotments. Answers the domain's own row types (rows.ts).
   */
  store: Store;
  /** Tenants' allotments in the ledger, and the batched posting of charges from them (docs/decisions/0028). */
  allotments: AllotmentPool;
  /** The operations metrics of AI calls (docs/decisions/0211); absent: none kept. */
  metrics?: InvocationMetrics;
};
