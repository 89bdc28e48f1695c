import { parseKeyring } from "@gateway/secrets";
import { closeAgents } from "@gateway/outbound";
import { LedgerCalls, reclaimThrough } from "@gateway/ledger-client";
import { jobsV1, ledgerV1, managedAiV1 } from "@gateway/protos";
import { peerClient, serviceBasics, startGrpcService } from "@gateway/runtime";
import { createAccountWebhookDispatcher } from "./account-webhooks/dispatcher.js";
import { createBalanceChecks } from "./account-webhooks/balance-checks.js";
import { createCallbackDispatcher } from "./callbacks/dispatcher.js";
import { createPrisma } from "./db.js";
import type { JobsContext, Tx } from "./domain/context.js";
import { noticeAccountEvents } from "./domain/account-webhooks/from-events.js";
import { recordAuditEvents } from "./domain/audit/record.js";
import { JobsEnv, loadEnv } from "./env.js";
import { jobsHandlers } from "./grpc/jobs.js";
import { advanceLease } from "./runner/advance-lease.js";
import { startJobRunner } from "./runner/consumer.js";
import { HttpTronNode } from "./tron/node.js";
import { createEnergyProvider } from "./tron/providers.js";

const env = loadEnv(process.env);
await startGrpcService<Tx, ReturnType<typeof createPrisma>>({
  ...serviceBasics("jobs", JobsEnv, env, import.meta.url),
  createPrisma,
  serviceNames: [jobsV1.serviceName],
  register: async (server, { prisma, transact, consume, js, jsm, subjects, logger, registry, shutdown }) => {
    const keyring = parseKeyring(env.ENCRYPTION_KEYS);
    const callbacks = { allowHttpLoopback: env.CALLBACK_ALLOW_HTTP_LOOPBACK, baseDelayMs: env.CALLBACK_BASE_DELAY_MS, timeoutMs: env.CALLBACK_TIMEOUT_MS };
    // Job callbacks and account webhooks: two delivery loops over their own tables, one set of settings.
    const deliveries = { prisma, keyring, logger, settings: callbacks, pollMs: env.CALLBACK_POLL_MS, maxPollMs: env.OUTBOX_POLL_MAX_MS, registry };
    const dispatcher = createCallbackDispatcher(deliveries);
    const ledger = peerClient(ledgerV1, env.LEDGER_GRPC_URL, { name: "ledger", deadlineMs: env.LEDGER_DEADLINE_MS, env, registry });
    const managedAi = peerClient(managedAiV1, env.MANAGED_AI_GRPC_URL, { name: "managed-ai", deadlineMs: env.LEDGER_DEADLINE_MS, env, registry });
    shutdown.add("managed-ai client", async () => managedAi.close());
    const webhooks = createAccountWebhookDispatcher(deliveries);
    let balanceChecks: { kick(): void } | undefined;
    const ctx: JobsContext = {
      prisma,
      transact,
      logger: logger.child({ component: "jobs" }),
      keyring,
      ledger: new LedgerCalls(ledger, logger, { batching: false }),
      reclaimAllotments: reclaimThrough(managedAi, logger),
      provider: createEnergyProvider(env),
      node: new HttpTronNode({ baseUrl: env.TRON_NODE_URL, solidityUrl: env.TRON_SOLIDITY_URL, timeoutMs: env.TRON_HTTP_TIMEOUT_MS }),
      tron: {
        mode: env.TRON_MODE,
        pricing: { baseUnits: env.TRON_PRICE_BASE_UNITS, unitsPerMegaEnergyHour: env.TRON_PRICE_UNITS_PER_MEGA_ENERGY_HOUR },
        quoteTtlSeconds: env.TRON_QUOTE_TTL_SECONDS,
        verifyTimeoutSeconds: env.TRON_VERIFY_TIMEOUT_SECONDS,
        verifyPollMs: env.TRON_VERIFY_POLL_MS,
        deliveryToleranceBps: env.TRON_DELIVERY_TOLERANCE_BPS,
      },
      callbacks,
      kickCallbacks: () => dispatcher.kick(),
      accounts: {
        availableUnits: async (tenantId) => BigInt((await ledger.GetBalance({ tenant_id: tenantId })).available_units),
        kickDeliveries: () => webhooks.kick(),
        kickBalanceChecks: () => balanceChecks?.kick(),
      },
    };
    const checks = createBalanceChecks(ctx, { pollMs: env.CALLBACK_POLL_MS, maxPollMs: env.OUTBOX_POLL_MAX_MS });
    balanceChecks = checks;
    server.add(jobsV1, jobsHandlers(ctx));
    // Every event of every service, once, into the audit trail: read in stream order,
    // one checkpoint row instead of a processed_events row per event (decision 0162); three
    // round trips and one insert per batch, commits that do not wait for the disk, envelopes
    // checked for shape only (decision 0166: a lost commit is read again from the checkpoint).
    // The same batch's transaction queues what the events mean for account webhooks
    // (budget crossings, key expiry notices) and marks balances to check (docs/decisions/0210);
    // the loops that act on those rows are woken once it has committed.
    let wake = { deliveries: false, checks: false };
    await consume(
      "jobs-audit-trail",
      [],
      async (events, tx) => {
        const stored = await recordAuditEvents({ tx, events });
        const noticed = await noticeAccountEvents({ tx, events });
        wake = { deliveries: wake.deliveries || noticed.queued > 0, checks: wake.checks || noticed.checks > 0 };
        return stored;
      },
      {
        checkpoint: true,
        synchronousCommit: false,
        trustPayloads: true,
        afterCommit: () => {
          if (wake.deliveries) webhooks.kick();
          if (wake.checks) checks.kick();
          wake = { deliveries: false, checks: false };
        },
      },
    );
    const runner = await startJobRunner({
      js,
      jsm,
      subjects,
      logger,
      registry,
      concurrency: env.JOBS_RUNNER_CONCURRENCY,
      ackWaitMs: env.JOBS_ACK_WAIT_MS,
      step: (input) => advanceLease({ ctx, input }),
    });
    dispatcher.start();
    webhooks.start();
    checks.start();
    // After the gRPC server has drained; before the database and NATS close (registered earlier, run later).
    shutdown.addFirst("ledger client", async () => ledger.close());
    shutdown.addFirst("callback connections", () => closeAgents());
    shutdown.addFirst("callback dispatcher", () => dispatcher.stop());
    shutdown.addFirst("account webhooks", () => webhooks.stop());
    shutdown.addFirst("balance checks", () => checks.stop());
    shutdown.addFirst("job runner", () => runner.stop());
  },
});
