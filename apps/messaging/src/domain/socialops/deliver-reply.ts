import { nextStep, postSigned } from "@gateway/outbound";
import type { AppContext } from "../app-context.js";
import { openSecret, replySecretContext, type StoredSocialOpsConfig } from "../instances/config.js";

export type ReplyDelivery = { done: true } | { done: false; retryInMs: number };

/**
 * One delivery attempt of a queued reply to the instance's reply target (the
 * `generic` provider: `POST reply_webhook_url` with the JSON below, signed with
 * `reply_webhook_secret` as push webhooks are, `X-Service-Event-Id` = the
 * message id on every attempt, so receivers dedupe). The attempt and the
 * message's new delivery state commit together with their event. A reply no
 * longer `queued` (delivered, failed, or another replica's attempt) is done.
 */
export async function deliverSocialReply({ ctx, input }: { ctx: AppContext; input: { message_id: string } }): Promise<ReplyDelivery> {
  const message = await ctx.prisma.socialMessage.findUnique({ where: { id: input.message_id }, include: { thread: true } });
  if (message?.direction !== "outbound" || message.deliveryState !== "queued") return { done: true };
  const instance = await ctx.prisma.appInstance.findUnique({ where: { id: message.instanceId } });
  const config = instance?.config as StoredSocialOpsConfig | undefined;
  const attempt = message.deliveryAttempts + 1;

  let outcome: { ok: boolean; status: number | null; error: string | null; final?: boolean };
  if (instance?.status !== "active" || !config?.reply_webhook_url) {
    outcome = { ok: false, status: null, error: "no_reply_target", final: true };
  } else {
    const body = JSON.stringify({
      event: "socialops.reply",
      event_id: message.id,
      message_id: message.id,
      thread_id: message.threadId,
      external_thread_id: message.thread.externalThreadId,
      provider: message.provider,
      text: message.text,
      created_at: message.createdAt.toISOString(),
      sent_at: new Date().toISOString(),
    });
    const secret = config.reply_webhook_secret ? openSecret(ctx.keyring, config.reply_webhook_secret, replySecretContext(instance.id)) : null;
    outcome = await postSigned(config.reply_webhook_url, { body, secret, eventId: message.id, timeoutMs: ctx.reply.timeoutMs, policy: ctx.egress });
  }

  const step = nextStep(outcome.ok, attempt, { maxAttempts: ctx.reply.maxAttempts, baseDelayMs: ctx.reply.baseDelayMs }, outcome.final === true);
  const state = step.state === "delivered" ? "delivered" : step.state === "pending" ? "retrying" : "failed";
  const recorded = await ctx.transact(async (tx, emit) => {
    const changed = await tx.socialMessage.updateMany({
      where: { id: message.id, deliveryState: "queued", deliveryAttempts: message.deliveryAttempts },
      data: {
        deliveryState: state === "retrying" ? "queued" : state,
        deliveryAttempts: attempt,
        deliveryLastStatus: outcome.status,
        deliveryError: outcome.error,
        ...(outcome.ok ? { deliveredAt: new Date() } : {}),
      },
    });
    if (changed.count === 0) return false;
    await emit("socialops.reply_attempted", {
      tenant_id: message.tenantId,
      thread_id: message.threadId,
      message_id: message.id,
      attempt,
      state,
      status: outcome.status,
      error: outcome.error,
    });
    return true;
  });
  if (!recorded || state !== "retrying") return { done: true };
  return { done: false, retryInMs: step.retryInMs };
}
