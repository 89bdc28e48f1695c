import { managedAiV1 } from "@gateway/protos";
import { serviceBasics, startGrpcService } from "@gateway/runtime";
import { createPrisma, type PrismaTx } from "./db.js";
import { startReconciler } from "./domain/reconcile/schedule.js";
import { startRetention } from "./domain/usage/retain.js";
import { ManagedAiEnv, loadEnv } from "./env.js";
import { InFlight } from "./grpc/in-flight.js";
import { managedAiHandlers } from "./grpc/managed-ai.js";
import { startSettlementLogPruning } from "./storage/settlement-log.js";
import { createContext } from "./wiring.js";

const env = loadEnv(process.env);
await startGrpcService<PrismaTx, ReturnType<typeof createPrisma>>({
  ...serviceBasics("managed-ai", ManagedAiEnv, env, import.meta.url),
  createPrisma,
  serviceNames: [managedAiV1.serviceName],
  register: (server, infra) => {
    const ctx = createContext(env, infra);
    const inFlight = new InFlight();
    server.add(managedAiV1, managedAiHandlers(ctx, inFlight, server));
    if (env.RECONCILE_INTERVAL_MS > 0) {
      const reconciler = startReconciler(ctx, {
        pool: infra.pool,
        intervalMs: env.RECONCILE_INTERVAL_MS,
        idleMaxMs: Math.max(env.RECONCILE_INTERVAL_MS, env.RECONCILE_IDLE_MAX_MS),
        activity: () => server.callsStarted,
        reservedAfterSeconds: env.RECONCILE_RESERVED_AFTER_SECONDS,
        settledAfterSeconds: env.RECONCILE_SETTLED_AFTER_SECONDS,
        allotmentIdleSeconds: env.ALLOTMENT_IDLE_SECONDS,
        allotmentMaxAgeSeconds: env.ALLOTMENT_MAX_AGE_SECONDS,
      });
      infra.shutdown.addFirst("reconciler", () => reconciler.stop());
    }
    // What the relay has published leaves the settlement log (docs/decisions/0281): a second
    // after the relay moved its checkpoint; otherwise a poll backing off to 10 minutes (0300).
    const pruning = startSettlementLogPruning(infra.pool, ctx.logger.child({ component: "settlement-log" }), {
      lingerMs: 1_000,
      pollMs: 60_000,
      maxPollMs: 600_000,
      maxBatches: 2,
    });
    infra.shutdown.addFirst("settlement log pruning", () => pruning.stop());
    if (env.USAGE_RETENTION_DAYS > 0) {
      const retention = startRetention(ctx, { pool: infra.pool, retentionDays: env.USAGE_RETENTION_DAYS, exportDir: env.USAGE_EXPORT_DIR });
      infra.shutdown.addFirst("usage retention", () => retention.stop());
    }
    // Right after the gRPC server has drained (it is added first, later): invocations whose
    // client left are still finishing their provider call and settling (docs/decisions/0177).
    // After them (added first, so it runs later): their charges are posted before the ledger client closes.
    infra.shutdown.addFirst("in-flight invocations", () => inFlight.drain());
  },
});
