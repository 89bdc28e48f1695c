import { z } from "zod";
import { AppError, parseInput } from "@gateway/errors";
import type { ManagedAiContext } from "../context.js";
import type { UsageRecord } from "../rows.js";
import { carvedHold } from "../allotments/carve.js";
import { holdsOf, recordHold } from "./hold.js";
import { fenceForOperator, followLedger, moveRecord } from "./move.js";
import { Actor, ResourceId } from "../schemas.js";

export const ReleaseUsageInput = z.object({ actor: Actor, id: ResourceId, reason: z.string().trim().min(1).max(240) });

/**
 * The hold of a record, also when a crash left the record without its id: the hold
 * protocol replays the reservation with its original parameters (docs/decisions/0224);
 * null when there never was one (a free or byok request, or a reservation that never
 * reached the ledger: one the replay took only now is given back). A claim on an
 * allotment is carved out of it; one whose request posted its charge from the
 * allotment first was charged: the record says so, and the operator gets a conflict.
 */
export async function findHold({ ctx, input: { row } }: { ctx: ManagedAiContext; input: { row: UsageRecord } }): Promise<{ holdId: string } | null> {
  if (row.holdId) return { holdId: row.holdId };
  if (row.reservedUnits === 0n || row.mode === "byok") return null; // byok records never hold (decision 0025)
  if (row.allotmentId) {
    const carved = await carvedHold({ ctx, input: { row: { ...row, allotmentId: row.allotmentId } } });
    if (carved.posted === undefined) return { holdId: carved.holdId };
    await moveRecord({ ctx, input: { row, holdId: null, next: { status: "completed", errorCode: null, finalUnits: carved.posted, refundedUnits: null } } });
    throw new AppError("conflict", `The request was already settled (completed, ${carved.posted} units) in the ledger; nothing to decide.`);
  }
  const found = await holdsOf(ctx).find(recordHold(row), null);
  return found.holdId === null ? null : { holdId: found.holdId };
}

/**
 * The record an operator may decide (release or capture): a `review` record, or a
 * `reserved` one past its hold's expiry, which is fenced first (moved to review, so
 * that its request, if it is in fact still running, can no longer settle it as its
 * own: docs/decisions/0028, addendum of issue 40). Anything else is a conflict
 * (404 for no record).
 */
export async function decidable({
  ctx,
  input: { id, verb, check },
}: {
  ctx: ManagedAiContext;
  input: { id: string; verb: "released" | "captured"; check?: (row: UsageRecord) => void };
}): Promise<UsageRecord> {
  const row = await ctx.store.usage.get(id);
  if (!row) throw new AppError("not_found", "No such request.");
  releasable(row, verb);
  check?.(row);
  const fenced = await fenceForOperator({ ctx, input: { row } });
  if (!fenced) throw new AppError("not_found", "No such request.");
  // The request settled it first: a completed or failed record is not the operator's.
  releasable(fenced, verb);
  return fenced;
}

/**
 * Whether an operator may decide a record (release or capture it): a `review`
 * record, or a `reserved` one past its hold's expiry. Anything else is a conflict.
 */
export function releasable(row: UsageRecord, verb: "released" | "captured"): void {
  const expired = row.holdExpiresAt.getTime() <= Date.now();
  if (!(row.status === "review" || (row.status === "reserved" && expired))) {
    throw new AppError(
      "conflict",
      row.status === "reserved"
        ? `The hold has not expired yet (it expires at ${row.holdExpiresAt.toISOString()}).`
        : `A ${row.status} request cannot be ${verb}.`,
    );
  }
}

/**
 * Writes an operator's decision on a record: its end state (`failed` for a release,
 * `completed` for a capture) with the operator and the reason, and the audit event, in
 * one transaction; 409 when the record changed since it was read.
 */
export async function recordDecision({
  ctx,
  input: { row, decision: d },
}: {
  ctx: ManagedAiContext;
  input: {
    row: UsageRecord;
    decision: { verb: "released" | "captured"; holdId: string | null; finalUnits: bigint; refunded: bigint; actor: string; reason: string };
  };
}): Promise<void> {
  let touched: string | null = null;
  await ctx.transact(async (tx, emit) => {
    const changed = await ctx.store.usage.decide(tx, row.id, row.status, {
      status: d.verb === "captured" ? "completed" : "failed",
      holdId: d.holdId,
      finalUnits: d.finalUnits,
      refundedUnits: d.refunded,
      errorCode: row.errorCode ?? "hold_expired",
      releasedBy: d.actor,
      releaseReason: d.reason,
      settledAt: new Date(),
    });
    if (!changed) throw new AppError("conflict", `The request changed while it was being ${d.verb}; look again.`);
    if (row.allotmentId) await ctx.store.records.recount(tx, row.allotmentId);
    if (row.allotmentId) touched = row.allotmentId;
    const audit = { actor: d.actor, request_id: row.id, tenant_id: row.tenantId, key_id: row.apiKeyId, reason: d.reason };
    if (d.verb === "captured")
      await emit("managed_ai.request_captured", { ...audit, final_units: d.finalUnits.toString(), refunded_units: d.refunded.toString() });
    else await emit("managed_ai.request_released", { ...audit, refunded_units: d.refunded.toString() });
  });
  // The recount reaches the balance views with the next report.
  if (touched) ctx.allotments.touch(touched);
}

/**
 * Operator release (spec section 3): a `review` record, or a `reserved` one past
 * its hold's expiry, becomes `failed` and its hold is voided; `refunded` is what
 * went back to the tenant. Anything else is a conflict. Audited with the reason.
 */
export async function releaseUsage({
  ctx,
  input,
}: {
  ctx: ManagedAiContext;
  input: z.input<typeof ReleaseUsageInput>;
}): Promise<{ id: string; status: "failed"; refunded: bigint }> {
  const q = parseInput(ReleaseUsageInput, input);
  const row = await decidable({ ctx, input: { id: q.id, verb: "released" } });

  let refunded = 0n;
  const hold = await findHold({ ctx, input: { row } });
  // The ledger's note holds the operator's whole reason (up to the 240 characters the
  // contract allows); the operation id void:<id> already says what the void is.
  if (hold) {
    const voided = await holdsOf(ctx).void(row.id, hold.holdId, q.reason);
    if (voided.kind === "settled") {
      refunded = BigInt(voided.response.hold?.released_units ?? "0");
    } else {
      // Settled in the ledger while the record was not told (a crash after capture).
      const settled = voided.hold;
      if (settled.status === "captured") {
        await followLedger({ ctx, input: { row, holdId: hold.holdId, hold: settled } });
        throw new AppError("conflict", "The request was already settled (completed) in the ledger; nothing to release.");
      }
      refunded = BigInt(settled.released_units);
    }
  }

  await recordDecision({
    ctx,
    input: { row, decision: { verb: "released", holdId: hold?.holdId ?? null, finalUnits: 0n, refunded, actor: q.actor, reason: q.reason } },
  });
  return { id: row.id, status: "failed", refunded };
}
