import { AiMetrics } from "./metrics/ai-metrics.js";
import { fileURLToPath } from "node:url";
import { redactConfig } from "@gateway/config";
import { Broadcast, LogRelay, poolStatements } from "@gateway/events";
import { createClient } from "@gateway/grpc-kit";
import { BATCH_BUCKETS, Histogram } from "@gateway/metrics";
import { ledgerV1, managedAiV1 } from "@gateway/protos";
import { relayTiming, startGrpcService } from "@gateway/runtime";
import { parseKeyring } from "./crypto/keyring.js";
import { createPrisma } from "./db.js";
import type { ManagedAiContext, Tx } from "./domain/context.js";
import { ManagedAiEnv, loadEnv } from "./env.js";
import { managedAiHandlers } from "./grpc/managed-ai.js";
import { InFlight } from "./grpc/in-flight.js";
import { CatalogCache, invalidating } from "./storage/catalog-cache.js";
import { LedgerCalls } from "@gateway/ledger-client";
import { Allotments } from "./storage/allotments.js";
import { UsageRecordWriter } from "./storage/usage-records.js";
import { ProviderClient } from "./providers/openai.js";
import { startReconciler } from "./domain/reconcile/schedule.js";
import { chargesRefused } from "./domain/usage/move.js";
import { egressPolicy } from "@gateway/outbound";

const env = loadEnv(process.env);
await startGrpcService<Tx, ReturnType<typeof createPrisma>>({
  service: "managed-ai",
  env,
  config: redactConfig(ManagedAiEnv, env),
  prismaDir: fileURLToPath(new URL("../prisma", import.meta.url)),
  createPrisma,
  serviceNames: [managedAiV1.serviceName],
  register: (server, { prisma, pool, transact, relay, publisher, nats, subjects, logger, registry, shutdown }) => {
    const catalog = new CatalogCache(prisma, env.CATALOG_CACHE_TTL_MS, new Broadcast(nats, subjects.broadcast("managed-ai-catalog"), logger));
    catalog.listen();
    const ledger = createClient(ledgerV1, env.LEDGER_GRPC_URL, {
      deadlineMs: env.LEDGER_DEADLINE_MS,
      name: "ledger",
      registry,
      serviceToken: env.SERVICE_TOKEN,
    });
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
    const recordEvents = new LogRelay({
      pool,
      js: publisher,
      subjects,
      source: "managed-ai",
      log: "usage_record_events",
      checkpoint: "usage_record_events",
      order: "transaction",
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
        refused: (requestIds) => chargesRefused(ctx, requestIds),
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
    const ctx: ManagedAiContext = {
      prisma,
      allotments,
      transact: invalidating(transact, catalog),
      sql,
      records: new UsageRecordWriter(sql, logger, recordEvents, {
        concurrency: env.RECORD_COMMIT_CONCURRENCY,
        onBatch: (kind, size) => batchSize.observe({ queue: `record_${kind}` }, size),
      }),
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
    const inFlight = new InFlight();
    server.add(managedAiV1, managedAiHandlers(ctx, inFlight));
    if (env.RECONCILE_INTERVAL_MS > 0) {
      const reconciler = startReconciler(ctx, {
        pool,
        intervalMs: env.RECONCILE_INTERVAL_MS,
        idleMaxMs: Math.max(env.RECONCILE_INTERVAL_MS, env.RECONCILE_IDLE_MAX_MS),
        activity: () => server.callsStarted,
        reservedAfterSeconds: env.RECONCILE_RESERVED_AFTER_SECONDS,
        settledAfterSeconds: env.RECONCILE_SETTLED_AFTER_SECONDS,
        allotmentIdleSeconds: env.ALLOTMENT_IDLE_SECONDS,
        allotmentMaxAgeSeconds: env.ALLOTMENT_MAX_AGE_SECONDS,
      });
      shutdown.addFirst("reconciler", () => reconciler.stop());
    }
    // Right after the gRPC server has drained (it is added first, later): invocations whose
    // client left are still finishing their provider call and settling (docs/decisions/0177).
    // After them (added first, so it runs later): their charges are posted before the ledger client closes.
    shutdown.addFirst("allotment charges", () => allotments.drain());
    shutdown.addFirst("in-flight invocations", () => inFlight.drain());
  },
});
