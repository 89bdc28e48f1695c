import type { ManagedAiContext } from "../context.js";
import type { RecordMove } from "../ports.js";
import type { UsageRecord } from "../rows.js";
import { captureOperation } from "@gateway/ledger-client";
import { carvedHold } from "../allotments/carve.js";

/** A record's next state, as the reconciler, an operator's fence or a late settlement sets it. */
export type Move = RecordMove;

/**
 * Moves a record on if it is still as it was read (status, error code and
 * `updated_at`), with a `managed_ai.request_reconciled` event and its allotment's
 * claims counted again, in one transaction; the count is reported to the ledger with
 * the next batch. False: the record changed meanwhile (another writer won), nothing
 * was written.
 */
export async function moveRecord({
  ctx,
  input: { row, holdId, next },
}: {
  ctx: Pick<ManagedAiContext, "transact" | "allotments" | "store">;
  input: {
    row: Pick<UsageRecord, "id" | "tenantId" | "apiKeyId" | "status" | "errorCode" | "updatedAt" | "reservedUnits" | "allotmentId">;
    holdId: string | null;
    next: Move;
  };
}): Promise<boolean> {
  const moved = await ctx.transact(async (tx, emit) => {
    if (!(await ctx.store.records.move(tx, row, holdId, next))) return false;
    if (row.allotmentId) await ctx.store.records.recount(tx, row.allotmentId);
    await emit("managed_ai.request_reconciled", {
      request_id: row.id,
      tenant_id: row.tenantId,
      key_id: row.apiKeyId,
      from_status: row.status,
      from_error_code: row.errorCode,
      status: next.status,
      error_code: next.errorCode,
      reserved_units: row.reservedUnits.toString(),
      final_units: next.finalUnits?.toString() ?? null,
      refunded_units: next.refundedUnits?.toString() ?? null,
    });
    return true;
  });
  if (moved && row.allotmentId) ctx.allotments.touch(row.allotmentId);
  return moved;
}

/**
 * A hold the ledger settled otherwise than an operator decides (a capture that reached
 * it before, with other units; a crash after a capture or a void): the record follows
 * what the ledger holds, with its event.
 */
export async function followLedger({
  ctx,
  input: { row, holdId, hold },
}: {
  ctx: Pick<ManagedAiContext, "transact" | "allotments" | "store">;
  input: { row: UsageRecord; holdId: string; hold: { status: string; captured_units: string; released_units: string } };
}): Promise<void> {
  const next: Move =
    hold.status === "captured"
      ? { status: "completed", errorCode: row.errorCode, finalUnits: BigInt(hold.captured_units), refundedUnits: null }
      : { status: "failed", errorCode: row.errorCode, finalUnits: 0n, refundedUnits: BigInt(hold.released_units) };
  await moveRecord({ ctx, input: { row, holdId, next } });
}

/** The code of a record an operator took over from its running request (it stays in review until decided). */
export const HOLD_EXPIRED = "hold_expired";

/**
 * Before an operator decides a `reserved` record (its hold past expiry, its request
 * possibly still running), the record is fenced: moved to review, so the request's
 * own settlement can no longer write it (it only writes `reserved` records) nor post
 * its charge from the allotment; a late settlement then settles the hold the
 * operator decides on, as the reconciler's fence has it (docs/decisions/0028,
 * addendum of issue 40). Answers the record as it now stands.
 */
export async function fenceForOperator({
  ctx,
  input: { row },
}: {
  ctx: Pick<ManagedAiContext, "transact" | "allotments" | "store">;
  input: { row: UsageRecord };
}): Promise<UsageRecord | null> {
  if (row.status !== "reserved") return row;
  await moveRecord({
    ctx,
    input: { row, holdId: row.holdId, next: { status: "review", errorCode: row.errorCode ?? HOLD_EXPIRED, finalUnits: null, refundedUnits: null } },
  });
  return ctx.store.usage.get(row.id);
}

/**
 * Charges from an allotment that the ledger refused (docs/decisions/0028, addendum of
 * issue 40). The usual cause: the record's claim was carved out of the allotment
 * meanwhile (a reconciler that took it for an orphan while its record's write was
 * lost), and post:<id> then names that carve's release. Each completed record's claim
 * is carved now (a replay finds that carve) and its charge captured from the hold
 * (capture:<id>): the record stays `completed`, now with its hold, and its allotment
 * counts it as carved, so the balance views agree within the next report. Where that
 * fails too, the record goes to review as `settlement_failed`, its usage kept, for the
 * reconciler (and then an operator).
 */
export async function chargesRefused({
  ctx,
  input: { requestIds },
}: {
  ctx: Pick<ManagedAiContext, "transact" | "allotments" | "store" | "logger" | "ledgerCalls">;
  input: { requestIds: string[] };
}): Promise<void> {
  const rows = await ctx.store.usage.completedWithoutHold(requestIds);
  for (const row of rows) {
    try {
      if (!row.allotmentId || row.finalUnits === null) throw new Error(`record ${row.id} has no allotment claim to carve`);
      const carved = await carvedHold({ ctx, input: { row: { ...row, allotmentId: row.allotmentId } } });
      // Posted after all (a refusal of a replay that raced its own first post): nothing to change.
      if (carved.posted !== undefined) continue;
      await ctx.ledgerCalls.capture({
        operation_id: captureOperation(row.id),
        hold_id: carved.holdId,
        units: row.finalUnits.toString(),
        reason: `managed request ${row.id}`,
      });
      if (
        !(await moveRecord({
          ctx,
          input: { row, holdId: carved.holdId, next: { status: "completed", errorCode: row.errorCode, finalUnits: row.finalUnits, refundedUnits: null } },
        }))
      )
        ctx.logger.warn({ request_id: row.id }, "a record whose charge was refused changed meanwhile; the reconciler checks it");
    } catch (err) {
      ctx.logger.error({ err, request_id: row.id }, "a refused charge could not be taken from a carved hold; its record goes to review with its usage");
      try {
        await moveRecord({
          ctx,
          input: { row, holdId: null, next: { status: "review", errorCode: "settlement_failed", finalUnits: null, refundedUnits: null } },
        });
      } catch (moveErr) {
        // The record is in review; its allotment's count follows when the reconciler carves it.
        ctx.logger.error({ err: moveErr, request_id: row.id }, "counting the allotment of a refused charge failed; the reconciler's carve counts it again");
      }
    }
  }
}
