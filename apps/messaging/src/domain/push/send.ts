import { z } from "zod";
import { Id, NonNegativeUnits } from "@gateway/contract";
import { AppError, isAppError, parseInput } from "@gateway/errors";
import { newId } from "@gateway/contract/ids";
import { holdsOf, pushHold } from "./hold.js";
import type { AppContext } from "../app-context.js";
import type { StoredPushConfig } from "../instances/config.js";
import { activeInstance } from "../instances/list.js";
import { pushBudgets } from "./budgets.js";
import { settlePush, statusOf, type PushStatus } from "./settle.js";
import { sendToTarget, type PushPayload } from "./targets.js";

export const SendPushInput = z.object({
  tenant_id: Id,
  api_key_id: z.string().nullable(),
  alias: Id,
  title: z.string().min(1).max(256),
  text: z.string().min(1).max(4096),
  key_budget_units: NonNegativeUnits.default(0n),
  key_budget_period: z.string().default(""),
});

export type PushResult = { target_id: string; ok: boolean; status: number | null; error: string | null };
export type SentPush = { messageId: string; status: PushStatus; results: PushResult[]; chargedUnits: bigint };

/**
 * `POST /v1/apps/webhook-push/{alias}/send` (CONTRACT.md section 8, decision 0110):
 * the record first, then the reservation of price × enabled targets (402 before
 * anything is sent), then every enabled target in parallel with its own timeout,
 * each outcome recorded as it comes, then settlement: captured per delivered
 * target, the rest released.
 */
export async function sendPush({ ctx, input }: { ctx: AppContext; input: z.input<typeof SendPushInput> }): Promise<SentPush> {
  const q = parseInput(SendPushInput, input);
  const instance = await activeInstance(ctx, q.tenant_id, "webhook-push", q.alias);
  const targets = (instance.config as StoredPushConfig).targets.filter((t) => t.enabled);
  if (targets.length === 0) throw new AppError("validation_failed", `The instance ${q.alias} has no enabled target.`);

  const id = newId("push");
  const unitPrice = ctx.push.priceUnits;
  const reservedUnits = unitPrice * BigInt(targets.length);
  const holdExpiresAt = new Date(Date.now() + ctx.push.holdTtlSeconds * 1000);
  const budgets = pushBudgets(instance, { apiKeyId: q.api_key_id, units: q.key_budget_units, period: q.key_budget_period });
  await ctx.transact(async (tx, emit) => {
    await tx.pushMessage.create({
      data: {
        id,
        tenantId: q.tenant_id,
        instanceId: instance.id,
        apiKeyId: q.api_key_id,
        status: "sending",
        unitPrice,
        reservedUnits,
        holdExpiresAt,
        budgeted: budgets.length > 0,
        deliveries: { create: targets.map((t, position) => ({ targetId: t.id, position, type: t.type })) },
      },
    });
    await emit("push.message_accepted", {
      message_id: id,
      tenant_id: q.tenant_id,
      instance_id: instance.id,
      key_id: q.api_key_id,
      targets: targets.length,
      reserved_units: reservedUnits.toString(),
    });
  });

  // The budgets before the hold (as for AI calls): a send without room in one is refused, nothing sent or held.
  // Any other failure leaves the record `sending`, and settlement (or the recovery loop) settles the claims.
  if (budgets.length > 0) {
    try {
      await ctx.budgets.reserve({ messageId: id, tenantId: q.tenant_id, budgets, units: reservedUnits });
    } catch (err) {
      if (isAppError(err) && err.code === "conflict") {
        await ctx.transact(async (tx, emit) => {
          await tx.pushMessage.delete({ where: { id } });
          await emit("push.message_refused", { message_id: id, tenant_id: q.tenant_id, reason: "budget" });
        });
      }
      throw err;
    }
  }

  if (reservedUnits > 0n) {
    let holdId: string;
    try {
      // Refused: the tenant's allotments give back what no call claimed first (docs/decisions/0028).
      const res = await holdsOf(ctx).open(pushHold({ id, tenantId: q.tenant_id, reservedUnits, holdExpiresAt }));
      holdId = res.hold_id;
    } catch (err) {
      if (isAppError(err) && err.code === "insufficient_balance") {
        // The claims go first: should that fail, the record stays `sending` and recovery releases them.
        if (budgets.length > 0) await ctx.budgets.settle(id, 0n);
        await ctx.transact(async (tx, emit) => {
          await tx.pushMessage.delete({ where: { id } });
          await emit("push.message_refused", { message_id: id, tenant_id: q.tenant_id, reason: "insufficient_balance" });
        });
        throw new AppError("insufficient_balance", `The balance does not cover ${targets.length} target(s) at ${unitPrice} units each; nothing was sent.`);
      }
      throw err; // the record stays `sending`: the recovery loop finds (or rules out) the hold and releases it
    }
    await ctx.transact(async (tx, emit) => {
      await tx.pushMessage.update({ where: { id }, data: { holdId } });
      await emit("push.message_reserved", { message_id: id, tenant_id: q.tenant_id, hold_id: holdId, reserved_units: reservedUnits.toString() });
    });
  }

  const payload: PushPayload = { message_id: id, title: q.title, text: q.text, sent_at: new Date().toISOString() };
  const deps = {
    keyring: ctx.keyring,
    egress: ctx.egress,
    timeoutMs: ctx.push.targetTimeoutMs,
    telegramApiBase: ctx.push.telegramApiBase,
    resolveConnectedAccount: ctx.resolveConnectedAccount,
  };
  const outcomes = await Promise.all(
    targets.map(async (target) => {
      const outcome = await sendToTarget(deps, q.tenant_id, instance.id, target, payload);
      await ctx
        .transact(async (tx, emit) => {
          const changed = await tx.pushDelivery.updateMany({
            where: { messageId: id, targetId: target.id, ok: null },
            data: { ok: outcome.ok, status: outcome.status, error: outcome.error, finishedAt: new Date() },
          });
          if (changed.count > 0) {
            await emit("push.target_attempted", {
              message_id: id,
              tenant_id: q.tenant_id,
              target_id: target.id,
              ok: outcome.ok,
              status: outcome.status,
              error: outcome.error,
            });
          }
        })
        .catch((err: unknown) => ctx.logger.warn({ err, message_id: id, target_id: target.id }, "push outcome not recorded; recovery will settle the message"));
      return { target_id: target.id, ...outcome };
    }),
  );

  try {
    const settled = await settlePush(ctx, id, { interrupted: false });
    return {
      messageId: id,
      status: settled.status,
      results: settled.deliveries.map((d) => ({ target_id: d.targetId, ok: d.ok === true, status: d.status, error: d.error })),
      chargedUnits: settled.chargedUnits,
    };
  } catch (err) {
    // The targets got (or missed) the message already; the recovery loop settles with the same operation ids and the same charge.
    ctx.logger.warn({ err, message_id: id }, "push settlement deferred to recovery");
    const delivered = BigInt(outcomes.filter((o) => o.ok).length);
    return { messageId: id, status: statusOf(outcomes), results: outcomes, chargedUnits: delivered * unitPrice };
  }
}
