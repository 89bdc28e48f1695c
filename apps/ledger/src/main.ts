import { BATCH_BUCKETS, Histogram } from "@gateway/metrics";
import { Relay, tailedLog } from "@gateway/events-runtime";
import { ledgerV1 } from "@gateway/protos";
import { relayTiming, serviceBasics, startGrpcService } from "@gateway/runtime";
import { prismaFor } from "./db.js";
import type { Tx } from "./domain/context.js";
import { LedgerEnv, loadEnv } from "./env.js";
import { poolMovements } from "./domain/movement-queue.js";
import { ledgerHandlers } from "./grpc/ledger.js";
import { availableGauge } from "./metrics/available-gauge.js";

const env = loadEnv(process.env);
await startGrpcService<Tx, ReturnType<typeof prismaFor>>({
  ...serviceBasics("ledger", LedgerEnv, env, import.meta.url),
  createPrisma: prismaFor,
  serviceNames: [ledgerV1.serviceName],
  register: (server, { prisma, pool, publisher, subjects, logger, registry, shutdown }) => {
    // The ledger's events are its transfers (view ledger_events): tailed, not copied
    // into an outbox (docs/decisions/0161). The runtime's outbox relay keeps draining
    // outbox rows written before the migration.
    const relay = new Relay({
      from: tailedLog({ pool, log: "ledger_events", checkpoint: "ledger_events" }),
      js: publisher,
      subjects,
      source: "ledger",
      logger,
      registry,
      ...relayTiming(env),
    });
    relay.start();
    shutdown.addFirst("ledger event relay", () => relay.stop());
    const batchSize = new Histogram({
      name: "ledger_movement_batch_size",
      help: "Movements per ledger_apply statement (group commit).",
      buckets: BATCH_BUCKETS,
      registers: [registry],
    });
    const movements = poolMovements(pool, relay, {
      logger,
      maxBatch: env.LEDGER_BATCH_MAX,
      concurrency: env.LEDGER_BATCH_CONCURRENCY,
      onBatch: (size) => batchSize.observe(size),
    });
    server.add(ledgerV1, ledgerHandlers({ prisma, pool, relay, movements, logger }));
    availableGauge({ registry, pool, perTenant: env.METRICS_TENANT_LABEL, logger });
  },
});
