import type { Subjects } from "@gateway/events";
import { startWorkQueue, type JetStreamClient, type JetStreamManager, type RunningConsumer } from "@gateway/events-runtime";
import type { Logger } from "@gateway/logger";
import type { AppContext } from "../domain/app-context.js";
import { deliverSocialReply } from "../domain/socialops/deliver-reply.js";

export const REPLY_CONSUMER = "messaging-socialops-replies";

/**
 * Delivers queued SocialOps replies from the events kit's work queue of
 * `socialops.reply_queued` (decisions 0112 and 0225). A message is acknowledged once its
 * reply is delivered or finally failed, and nak'ed with the reply's backoff delay while
 * it is retrying; one whose attempt failed before it was recorded is nak'ed with a
 * growing delay; one that is never acknowledged (this process died mid-attempt) comes
 * back after the ack wait, to this or another replica. The reply row is the idempotency
 * record: a redelivery of a settled reply does nothing. Deliveries are not bounded here:
 * the reply's attempts are (`REPLY_MAX_ATTEMPTS`).
 */
export function startReplyWorker(options: {
  ctx: AppContext;
  js: JetStreamClient;
  jsm: JetStreamManager;
  subjects: Subjects;
  logger: Logger;
  concurrency?: number;
}): Promise<RunningConsumer> {
  const { ctx } = options;
  return startWorkQueue({
    js: options.js,
    jsm: options.jsm,
    subjects: options.subjects,
    durable: REPLY_CONSUMER,
    type: "socialops.reply_queued",
    concurrency: options.concurrency ?? 8,
    ackWaitMs: ctx.reply.timeoutMs + 5_000,
    logger: options.logger.child({ component: "reply-worker" }),
    describe: (event) => ({ message_id: event.data.message_id }),
    work: async (event) => {
      const result = await deliverSocialReply({ ctx, input: { message_id: event.data.message_id } });
      return result.done ? { kind: "done" } : { kind: "later", delayMs: result.retryInMs };
    },
  });
}
