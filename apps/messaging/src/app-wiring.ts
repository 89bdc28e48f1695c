import { LedgerCalls, reclaimThrough } from "@gateway/ledger-client";
import { peerClient, type Infrastructure } from "@gateway/runtime";
import { closeAgents, egressPolicy } from "@gateway/outbound";
import { ledgerV1, managedAiV1 } from "@gateway/protos";
import { parseKeyring } from "@gateway/secrets";
import type { AppContext } from "./domain/app-context.js";
import type { MessagingContext, Tx } from "./db.js";
import type { MessagingEnv } from "./env.js";
import type { PrismaClient } from "./generated/prisma/client.js";
import { appHandlers } from "./grpc/apps.js";
import { pushRecoveryLoop } from "./domain/push/recover.js";
import { startReplyWorker } from "./socialops/reply-worker.js";

/**
 * Push and SocialOps on top of the service's infrastructure: the ledger and
 * managed-ai clients, the recovery loop for interrupted push messages, the
 * reply worker. Returns the gRPC handlers; everything started stops on shutdown.
 */
export async function startApps(env: MessagingEnv, base: MessagingContext, infra: Infrastructure<PrismaClient, Tx>): Promise<ReturnType<typeof appHandlers>> {
  const { logger, registry, shutdown } = infra;
  const ledger = peerClient(ledgerV1, env.LEDGER_GRPC_URL, { name: "ledger", deadlineMs: env.LEDGER_DEADLINE_MS, env, registry });
  const managedAi = peerClient(managedAiV1, env.MANAGED_AI_GRPC_URL, { name: "managed-ai", deadlineMs: env.LEDGER_DEADLINE_MS, env, registry });
  const ctx: AppContext = {
    ...base,
    logger: logger.child({ component: "apps" }),
    keyring: parseKeyring(env.ENCRYPTION_KEYS),
    egress: egressPolicy({ allowPrivateTargets: env.ALLOW_PRIVATE_TARGETS }),
    ledger: new LedgerCalls(ledger, logger, { batching: false }),
    budgets: {
      async reserve(input) {
        await managedAi.ReserveBudgets({
          request_id: input.messageId,
          tenant_id: input.tenantId,
          budgets: input.budgets.map((b) => ({ scope: b.scope, id: b.id, limit_units: b.limitUnits.toString(), period: b.period })),
          units: input.units.toString(),
        });
      },
      async settle(messageId, finalUnits) {
        await managedAi.SettleBudgets({ request_id: messageId, final_units: finalUnits.toString() });
      },
    },
    reclaimAllotments: reclaimThrough(managedAi, logger),
    resolveConnectedAccount: async (tenantId, id) => {
      const account = await managedAi.RevealConnectedAccount({ tenant_id: tenantId, id });
      return { id: account.id, provider: account.provider, secret: account.secret };
    },
    push: {
      priceUnits: BigInt(env.PUSH_PRICE_UNITS),
      targetTimeoutMs: env.PUSH_TARGET_TIMEOUT_MS,
      holdTtlSeconds: env.PUSH_HOLD_TTL_SECONDS,
      telegramApiBase: env.TELEGRAM_API_BASE,
    },
    reply: { timeoutMs: env.REPLY_TIMEOUT_MS, maxAttempts: env.REPLY_MAX_ATTEMPTS, baseDelayMs: env.REPLY_BASE_DELAY_MS },
  };

  // Interrupted push messages are looked for when the oldest one still sending would become
  // interrupted, at least PUSH_RECOVERY_AFTER_MS apart while none is sending, never closer
  // than PUSH_RECOVERY_INTERVAL_MS (docs/decisions/0110, 0200, 0225).
  const recovery = pushRecoveryLoop(ctx, { afterMs: env.PUSH_RECOVERY_AFTER_MS, intervalMs: env.PUSH_RECOVERY_INTERVAL_MS });
  recovery.start();
  const worker = await startReplyWorker({ ctx, js: infra.js, jsm: infra.jsm, subjects: infra.subjects, logger });

  // Before the broker and the database close; the gRPC server (added first later) still drains before this.
  shutdown.addFirst("push and socialops", async () => {
    await Promise.all([worker.stop(), recovery.stop()]);
    ledger.close();
    managedAi.close();
    await closeAgents();
  });
  return appHandlers(ctx);
}
