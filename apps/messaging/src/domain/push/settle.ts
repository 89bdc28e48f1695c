import { AppError } from "@gateway/errors";
import type { AppContext } from "../app-context.js";
import { holdsOf, pushHold } from "./hold.js";
import type { PushDelivery, PushMessage } from "../../generated/prisma/client.js";

export type PushStatus = "delivered" | "partial" | "failed";
export type SettledPush = { message: PushMessage; deliveries: PushDelivery[]; status: PushStatus; chargedUnits: bigint; settled: boolean };

export function statusOf(deliveries: { ok: boolean | null }[]): PushStatus {
  const delivered = deliveries.filter((d) => d.ok === true).length;
  return delivered === deliveries.length && delivered > 0 ? "delivered" : delivered > 0 ? "partial" : "failed";
}

/**
 * Settles a push message from the outcomes recorded in the database (never from
 * memory, so the sender and a recovery compute the same charge): delivered
 * targets × unit price is captured, the rest of the hold released; nothing
 * delivered voids the hold. `interrupted` first records every target without an
 * outcome as not delivered (a crash lost it: it is not charged). A message
 * already settled is returned as it is. Ledger failures leave it `sending` for
 * the recovery loop, which retries with the same operation ids.
 */
export async function settlePush(ctx: AppContext, messageId: string, options: { interrupted: boolean }): Promise<SettledPush> {
  if (options.interrupted) {
    await ctx.transact(async (tx, emit) => {
      const open = await tx.pushDelivery.findMany({ where: { messageId, ok: null } });
      if (open.length === 0) return;
      const msg = await tx.pushMessage.findUniqueOrThrow({ where: { id: messageId } });
      if (msg.status !== "sending") return;
      await tx.pushDelivery.updateMany({ where: { messageId, ok: null }, data: { ok: false, error: "interrupted", finishedAt: new Date() } });
      for (const d of open) {
        await emit("push.target_attempted", {
          message_id: messageId,
          tenant_id: msg.tenantId,
          target_id: d.targetId,
          ok: false,
          status: null,
          error: "interrupted",
        });
      }
    });
  }
  const msg = await ctx.prisma.pushMessage.findUniqueOrThrow({ where: { id: messageId }, include: { deliveries: { orderBy: { position: "asc" } } } });
  const { deliveries, ...message } = msg;
  if (msg.status !== "sending") return { message, deliveries, status: msg.status as PushStatus, chargedUnits: msg.chargedUnits ?? 0n, settled: true };
  if (deliveries.some((d) => d.ok === null)) throw new AppError("internal_error", "A push message cannot be settled while a target is still being delivered.");

  const delivered = BigInt(deliveries.filter((d) => d.ok === true).length);
  let charged = delivered * msg.unitPrice;
  let holdId: string | null = null;
  if (msg.reservedUnits > 0n) {
    // The hold protocol (docs/decisions/0224): the hold found again when a crash lost its id (one
    // that only the replay took was never reserved: nothing was sent on it), then captured for
    // what was delivered or voided; settled before (a racing sender or recovery), the ledger's
    // state is the truth.
    const outcome = await holdsOf(ctx).recover(pushHold(message), msg.holdId, () =>
      charged > 0n
        ? { kind: "capture", units: charged, reason: `push message ${msg.id}` }
        : { kind: "void", reason: `push message ${msg.id}: nothing delivered` },
    );
    if (outcome.kind === "open") throw new AppError("internal_error", "A push message's hold was left open.");
    holdId = outcome.kind === "none" ? null : outcome.holdId;
    charged = outcome.kind === "captured" ? outcome.capturedUnits : 0n;
  } else {
    charged = 0n;
  }

  // Budgets in managed-ai follow the charge, before the message is marked settled: a failure here
  // leaves it `sending`, and the recovery loop settles again (both calls are replays).
  if (msg.budgeted) await ctx.budgets.settle(msg.id, charged);

  const status = statusOf(deliveries);
  await ctx.transact(async (tx, emit) => {
    const changed = await tx.pushMessage.updateMany({
      where: { id: msg.id, status: "sending" },
      data: { status, holdId, chargedUnits: charged, settledAt: new Date(), recovered: options.interrupted },
    });
    if (changed.count === 0) return; // settled concurrently with the same ledger outcome
    await emit("push.message_settled", {
      message_id: msg.id,
      tenant_id: msg.tenantId,
      instance_id: msg.instanceId,
      status,
      targets: deliveries.length,
      delivered: Number(delivered),
      charged_units: charged.toString(),
      recovered: options.interrupted,
    });
  });
  return { message: { ...message, status, holdId, chargedUnits: charged }, deliveries, status, chargedUnits: charged, settled: true };
}
