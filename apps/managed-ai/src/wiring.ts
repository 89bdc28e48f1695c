import { Broadcast, poolStatements, Relay, tailedLog } from "@gateway/events-runtime";
import { LedgerCalls } from "@gateway/ledger-client";
import { BATCH_BUCKETS, Histogram } from "@gateway/metrics";
import { egressPolicy } from "@gateway/outbound";
import { ledgerV1 } from "@gateway/protos";
import { peerClient, relayTiming, type Infrastructure } from "@gateway/runtime";
import { parseKeyring } from "./crypto/keyring.js";
import type { createPrisma, PrismaTx } from "./db.js";
import type { ManagedAiContext } from "./domain/context.js";
import { chargesRefused } from "./domain/usage/move.js";
import type { ManagedAiEnv } from "./env.js";
import { AiMetrics } from "./metrics/ai-metrics.js";
import { ProviderClient } from "./providers/openai.js";
import { Allotments } from "./storage/allotments.js";
import { CatalogCache, invalidating } from "./storage/catalog-cache.js";
import { domainTransact } from "./storage/prisma-tx.js";
import { sqlStore } from "./storage/store.js";
import { UsageRecordWriter } from "./storage/usage-records.js";

/**
 * managed-ai's context, built from its environment and the runtime's infrastructure:
 * the catalog cache, the ledger's door and the allotments, the provider client, the
 * usage records' writer and the relay that tails their events, the metrics. Each
 * collaborator's shutdown step is registered here, in the order the service stops.
 */
export function createContext(env: ManagedAiEnv, infra: Infrastructure<ReturnType<typeof createPrisma>, PrismaTx>): ManagedAiContext {
  const { prisma, pool, transact, relay, publisher, nats, subjects, logger, registry, shutdown } = infra;
  const catalog = new CatalogCache(prisma, env.CATALOG_CACHE_TTL_MS, new Broadcast(nats, subjects.broadcast("managed-ai-catalog"), logger));
  catalog.listen();
  const ledger = peerClient(ledgerV1, env.LEDGER_GRPC_URL, { name: "ledger", deadlineMs: env.LEDGER_DEADLINE_MS, env, registry });
  // The operations metrics of AI calls, on this service's metrics port only (docs/decisions/0211).
  const metrics = new AiMetrics(registry, { tenantLabel: env.METRICS_TENANT_LABEL });
  const provider = new ProviderClient(
    { headersMs: env.PROVIDER_TIMEOUT_MS, idleMs: env.PROVIDER_IDLE_TIMEOUT_MS },
    egressPolicy({ allowPrivateTargets: env.ALLOW_PRIVATE_TARGETS }),
    { onCall: () => metrics.providerCall() },
  );
  // After the gRPC server has drained (it stops first): nothing calls these any more.
  shutdown.add("ledger client", async () => ledger.close());
  shutdown.add("provider client", () => provider.close());
  const sql = poolStatements(pool, relay);
  // The usage records' events are the records' rows, tailed by transaction id (view
  // usage_record_events, docs/decisions/0205); everything else goes through the outbox.
  const recordEvents = new Relay({
    from: tailedLog({ pool, log: "usage_record_events", checkpoint: "usage_record_events", order: "transaction" }),
    js: publisher,
    subjects,
    source: "managed-ai",
    logger,
    registry,
    ...relayTiming(env),
  });
  recordEvents.start();
  // Added first among the steps below, so it runs after them: the last settlements are published.
  shutdown.addFirst("usage record event relay", () => recordEvents.stop());
  const batchSize = new Histogram({
    name: "managed_ai_batch_size",
    help: "Items per group-committed call: usage record opens and settlements (one statement each), ledger calls (one ApplyBatch).",
    labelNames: ["queue"],
    buckets: BATCH_BUCKETS,
    registers: [registry],
  });
  const ledgerCalls = new LedgerCalls(ledger, logger, { onBatch: (size) => batchSize.observe({ queue: "ledger_calls" }, size) });
  const allotments = new Allotments(
    {
      sql,
      ledgerCalls,
      logger: logger.child({ component: "allotments" }),
      // Called after start-up only (a batch's answer), when ctx is there.
      refused: (requestIds) => chargesRefused({ ctx, input: { requestIds } }),
    },
    {
      enabled: env.ALLOTMENTS,
      sharePercent: env.ALLOTMENT_SHARE_PERCENT,
      maxUnits: BigInt(env.ALLOTMENT_MAX_UNITS),
      minUnits: BigInt(env.ALLOTMENT_MIN_UNITS),
      lingerMs: env.ALLOTMENT_POST_LINGER_MS,
      holdTtlSeconds: env.ALLOTMENT_MAX_AGE_SECONDS + 3_600,
    },
  );
  // The domain's transactions are Prisma's, opaque to it (storage/prisma-tx.ts).
  const domainTx = domainTransact(transact);
  const ctx: ManagedAiContext = {
    allotments,
    transact: domainTx,
    writeCatalog: invalidating(domainTx, catalog),
    sql,
    records: new UsageRecordWriter(sql, logger, recordEvents, {
      concurrency: env.RECORD_COMMIT_CONCURRENCY,
      onBatch: (kind, size) => batchSize.observe({ queue: `record_${kind}` }, size),
    }),
    store: sqlStore(sql, prisma),
    catalog,
    logger: logger.child({ component: "managed-ai" }),
    keyring: parseKeyring(env.ENCRYPTION_KEYS),
    upstreamTestTimeoutMs: env.UPSTREAM_TEST_TIMEOUT_MS,
    fetch: globalThis.fetch,
    ledgerCalls,
    provider,
    holdTtlSeconds: env.HOLD_TTL_SECONDS,
    metrics,
  };
  // After the in-flight invocations (added first, so it runs later): their charges are posted before the ledger client closes.
  shutdown.addFirst("allotment charges", () => allotments.drain());
  return ctx;
}
