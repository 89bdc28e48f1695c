import { AckPolicy, DeliverPolicy, nanos, type JsMsg } from "nats";
import { CONSUME_EXPIRES_MS, parseEnvelope, type JetStreamClient, type JetStreamManager, type Subjects } from "@gateway/events";
import { runWithContext, type Logger } from "@gateway/logger";
import { newId } from "@gateway/ids";
import type { AppContext } from "../domain/app-context.js";
import { deliverSocialReply } from "../domain/socialops/deliver-reply.js";

export const REPLY_CONSUMER = "messaging-socialops-replies";

/**
 * Delivers queued SocialOps replies from the durable JetStream consumer of
 * `socialops.reply_queued` (decision 0112). A message is acknowledged once its
 * reply is delivered or finally failed, and nak'ed with the backoff delay while
 * it is retrying; one that is never acknowledged (this process died mid-attempt)
 * comes back after the ack wait, to this or another replica. The reply row is
 * the idempotency record: a redelivery of a settled reply does nothing.
 */
export async function startReplyWorker(options: {
  ctx: AppContext;
  js: JetStreamClient;
  jsm: JetStreamManager;
  subjects: Subjects;
  logger: Logger;
  concurrency?: number;
}): Promise<{ stop(): Promise<void> }> {
  const { ctx, js, jsm, subjects } = options;
  const log = options.logger.child({ component: "reply-worker" });
  const config = {
    durable_name: REPLY_CONSUMER,
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    ack_wait: nanos(ctx.reply.timeoutMs + 5_000),
    max_deliver: -1,
    filter_subject: subjects.subject("socialops.reply_queued"),
  };
  try {
    await jsm.consumers.add(subjects.stream, config);
  } catch (err) {
    if (!/already (exists|in use)/i.test(String((err as Error).message))) throw err;
    await jsm.consumers.update(subjects.stream, REPLY_CONSUMER, { ack_wait: config.ack_wait, max_deliver: config.max_deliver });
  }
  const consumer = await js.consumers.get(subjects.stream, REPLY_CONSUMER);
  const limit = options.concurrency ?? 8;
  const messages = await consumer.consume({ max_messages: limit, expires: CONSUME_EXPIRES_MS });
  const decoder = new TextDecoder();
  const running = new Set<Promise<void>>();

  async function handle(msg: JsMsg): Promise<void> {
    let messageId: string;
    let requestId: string;
    try {
      const event = parseEnvelope(JSON.parse(decoder.decode(msg.data)));
      if (event.type !== "socialops.reply_queued") return msg.ack();
      messageId = (event.data as { message_id: string }).message_id;
      requestId = event.request_id ?? newId("req");
    } catch (err) {
      log.error({ err: String(err) }, "malformed reply event dropped");
      return msg.term();
    }
    await runWithContext({ requestId }, async () => {
      try {
        const result = await deliverSocialReply({ ctx, input: { message_id: messageId } });
        if (result.done) msg.ack();
        else msg.nak(result.retryInMs);
      } catch (err) {
        log.warn({ err, message_id: messageId }, "reply delivery failed before it was recorded; will be redelivered");
        msg.nak(5_000);
      }
    });
  }

  const loop = (async () => {
    for await (const msg of messages) {
      const task = handle(msg).finally(() => running.delete(task));
      running.add(task);
      if (running.size >= limit) await Promise.race(running);
    }
  })().catch((err: unknown) => log.error({ err }, "reply worker stopped"));

  return {
    async stop() {
      await messages.close();
      await loop;
      await Promise.allSettled(running);
    },
  };
}
