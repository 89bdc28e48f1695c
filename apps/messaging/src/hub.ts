import { Broadcast } from "@gateway/events-runtime";
import { checkUrl, egressPolicy } from "@gateway/outbound";
import { parseKeyring } from "@gateway/secrets";
import type { Infrastructure } from "@gateway/runtime";
import type { HubTransact, Tx } from "./db.js";
import type { PrismaClient } from "./generated/prisma/client.js";
import { formatOnlyFileRefs } from "./domain/files/file-refs.js";
import type { HubContext } from "./domain/hub-context.js";
import { createWebhookDispatcher } from "./domain/webhooks/dispatcher.js";
import type { MessagingEnv } from "./env.js";

/** What an edge replica hears when widget sessions end (it drops them from its cache at once). */
export type WidgetSessionInvalidation = { session_ids: string[] };
export const WIDGET_SESSIONS_BROADCAST = "widget-sessions";

/** The bot, widget and conversation hub: its context and its webhook dispatcher (stopped on shutdown). */
export function startHub(env: MessagingEnv, infra: Infrastructure<PrismaClient, Tx>, transact: HubTransact): HubContext {
  const { prisma, nats, subjects, logger, shutdown } = infra;
  const keyring = parseKeyring(env.ENCRYPTION_KEYS);
  // Conversation webhooks take https only (plain http and private addresses with ALLOW_PRIVATE_TARGETS, for local testing).
  const policy = egressPolicy({ allowPrivateTargets: env.ALLOW_PRIVATE_TARGETS, requireHttps: true });
  const dispatcher = createWebhookDispatcher({
    ctx: { prisma, transact, keyring },
    logger: logger.child({ component: "conversation-webhooks" }),
    policy,
    baseDelayMs: env.CONVERSATION_WEBHOOK_BASE_DELAY_MS,
    timeoutMs: env.CONVERSATION_WEBHOOK_TIMEOUT_MS,
    pollMs: env.CONVERSATION_WEBHOOK_POLL_MS,
    maxPollMs: env.OUTBOX_POLL_MAX_MS,
  });
  dispatcher.start();
  // Before the database closes: the attempts in flight are recorded (a stop waits for them).
  shutdown.addFirst("conversation webhooks", () => dispatcher.stop());
  const revocations = new Broadcast<WidgetSessionInvalidation>(nats, subjects.broadcast(WIDGET_SESSIONS_BROADCAST), logger);
  return {
    prisma,
    transact,
    logger: logger.child({ component: "conversations" }),
    keyring,
    widgetRefreshTtlSeconds: env.WIDGET_REFRESH_TOKEN_TTL_SECONDS,
    async checkWebhookUrl(url) {
      const check = await checkUrl(url, policy);
      return check.ok ? { ok: true } : { ok: false, reason: check.reason };
    },
    kickWebhooks: () => dispatcher.kick(),
    // After the commit; a broadcast that cannot be sent leaves the edges' cache TTL as the bound, not a failed call.
    announceRevoked: async (ids) => {
      await revocations.send({ session_ids: ids }).catch((err: unknown) => logger.warn({ err, count: ids.length }, "widget session revocation not broadcast"));
    },
    files: formatOnlyFileRefs,
  };
}
