import { z } from "zod";
import { isAppError, parseInput } from "@gateway/errors";
import { type HoldDecision, type HoldOutcome, postOperation } from "@gateway/ledger-client";
import { runWithContext } from "@gateway/logger";
import type { ManagedAiContext } from "../context.js";
import type { UsageRecord } from "../rows.js";
import { costUnits } from "../invocation/cost.js";
import { usageOf } from "../invocation/settlement.js";
import { carvedHold } from "../allotments/carve.js";
import { holdsOf, recordHold } from "../usage/hold.js";
import { moveRecord } from "../usage/move.js";
import { decide, INTERRUPTED, type Decision, type HoldState } from "./decide.js";

/** The ledger's GetHolds takes 1 to this many ids. */
const MAX_HOLDS_PER_READ = 1000;

export const ReconcileInput = z.object({
  /** A `reserved` record older than this belongs to a process that is gone (longer than any request lasts). */
  reservedAfterSeconds: z.number().int().min(1),
  /** At most this many records per pass. */
  limit: z.number().int().min(1).max(10_000).default(500),
  /** Records worked on at once. */
  concurrency: z.number().int().min(1).max(64).default(16),
  /**
   * A `completed` record settled longer ago than this has its capture checked in the
   * ledger (longer than any capture sent with it can take to commit).
   */
  settledAfterSeconds: z.number().int().min(1).default(60),
  /** Records checked per ledger read. */
  checkBatch: z.number().int().min(1).max(MAX_HOLDS_PER_READ).default(MAX_HOLDS_PER_READ),
  /**
   * A record the pass leaves as it is (it waits for an operator, or its step failed) is
   * looked at again after half its age, at least this long and at most `recheckMaxSeconds`.
   */
  recheckMinSeconds: z.number().int().min(0).default(30),
  recheckMaxSeconds: z.number().int().min(1).default(3_600),
});

export type ReconcileReport = {
  examined: number;
  completed: number;
  failed: number;
  toOperator: number;
  unchanged: number;
  errors: number;
  /** Completed records whose capture was looked for in the ledger. */
  checked: number;
  /** Of those, captures that were missing and were replayed. */
  recaptured: number;
};

/**
 * The reconciler's pass (docs/decisions/0150): every record whose outcome was
 * unknown when it was written, and that the ledger can now tell, becomes final
 * and agrees with the ledger. Candidates (`candidates`): `reserved` records older
 * than any request lasts (their process died), then the `review` records that are
 * due; one left as it is comes back later and later. For each, the hold
 * is found (its id, or by replaying reserve:<id>, which the ledger recognises
 * before anything else), its state read, and then:
 *   captured → completed with the captured units; voided or never taken → failed;
 *   open and the charge known (settlement_failed) → capture:<id> replayed;
 *   open and nothing owed (ledger_unavailable, a provider failure) → void:<id>;
 *   open and the provider's usage unknown → stays (a `reserved` orphan goes to
 *   review as `interrupted`) for an operator.
 * Every change is conditional on the record being as it was read, so a request
 * that settles meanwhile, an operator's release, or another replica wins; every
 * ledger call is a replay of the record's own operation ids, so two passes at
 * once (two replicas) move no money twice.
 */
export async function reconcileUsage({ ctx, input }: { ctx: ManagedAiContext; input: z.input<typeof ReconcileInput> }): Promise<ReconcileReport> {
  const q = parseInput(ReconcileInput, input);
  const report: ReconcileReport = { examined: 0, completed: 0, failed: 0, toOperator: 0, unchanged: 0, errors: 0, checked: 0, recaptured: 0 };
  {
    const rows = await candidates(ctx, q);
    // Records are independent and every ledger call is a replay: several at once,
    // their movements pipelined into the ledger's batches. The ledger down (or
    // the database) ends the pass early; the next one starts over.
    let down = false;
    let next = 0;
    const worker = async () => {
      while (!down && next < rows.length) {
        const row = rows[next++]!;
        report.examined++;
        try {
          // In the record's request context: the ledger's movements and logs carry its id.
          const outcome = await runWithContext({ requestId: row.id, actor: "system:reconciler" }, () => reconcileRecord(ctx, row));
          report[outcome]++;
          if (outcome === "unchanged") await recheckLater(ctx, row, q);
        } catch (err) {
          report.errors++;
          if (isAppError(err) && err.code === "unavailable") down = true;
          // The ledger down ends the pass (every record waits for it alike); anything else is this record's own.
          else await recheckLater(ctx, row, q).catch(() => undefined);
          ctx.logger.warn({ err, request_id: row.id }, "reconciling a usage record failed; a later pass tries again");
        }
      }
    };
    await Promise.all(Array.from({ length: q.concurrency }, worker));
  }
  try {
    await checkCaptures(ctx, q, report);
  } catch (err) {
    report.errors++;
    ctx.logger.warn({ err }, "checking the captures of settled records failed; the next pass goes on from the same record");
  }
  if (report.completed + report.failed + report.toOperator + report.errors + report.recaptured > 0)
    ctx.logger.info({ reconcile: report }, "usage records reconciled");
  return report;
}

/**
 * A pass's records, so that none stands still at the head of the queue
 * (docs/decisions/0028, addendum of issue 40): first the `reserved` records older
 * than any request lasts (orphans: every one leaves `reserved` when it is worked
 * on), oldest first; then the `review` records that are due, those never looked at
 * first. A record the pass leaves as it is gets a later `recheck_at`, so records
 * that wait for an operator come back later and later instead of filling every
 * pass. Byok records have no hold (docs/decisions/0025).
 */
async function candidates(ctx: ManagedAiContext, q: z.output<typeof ReconcileInput>): Promise<UsageRecord[]> {
  const now = new Date();
  const orphans = await recordsById(
    ctx,
    await ctx.store.reconciler.candidateIds("reserved", new Date(now.getTime() - q.reservedAfterSeconds * 1000), now, q.limit),
  );
  if (orphans.length >= q.limit) return orphans;
  const review = await recordsById(ctx, await ctx.store.reconciler.candidateIds("review", null, now, q.limit - orphans.length));
  return [...orphans, ...review];
}

/** The records of `ids`, in that order (those gone since are left out). */
async function recordsById(ctx: ManagedAiContext, ids: string[]): Promise<UsageRecord[]> {
  if (ids.length === 0) return [];
  const byId = new Map((await ctx.store.usage.byIds(ids)).map((r) => [r.id, r]));
  return ids.flatMap((id) => byId.get(id) ?? []);
}

/** A record left as it is comes back after half its age (within the pass's bounds). */
async function recheckLater(ctx: ManagedAiContext, row: UsageRecord, q: z.output<typeof ReconcileInput>): Promise<void> {
  const ageSeconds = Math.max(0, (Date.now() - row.createdAt.getTime()) / 1000);
  const seconds = Math.round(Math.min(q.recheckMaxSeconds, Math.max(q.recheckMinSeconds, ageSeconds / 2)));
  await ctx.store.reconciler.recheckAt(row.id, seconds);
}

/**
 * One pass's reads of settled records: at most this many batches (the next pass goes
 * on). 100 batches of 1,000 per pass keep up with about 3,300 requests per second
 * at the default 30 s interval; a pass that falls behind catches up in the next ones.
 */
const CHECK_ROUNDS = 100;

type Settled = UsageRecord;

/**
 * The check of settled records (docs/decisions/0164). A request writes its
 * record `completed` in parallel with the capture, so a crash between the two
 * can leave a completed record whose hold is still open. Every completed record
 * with a hold is checked once, in settlement order after the `captures`
 * checkpoint, when it is older than `settledAfterSeconds`: its holds are read
 * from the ledger a batch at a time, then
 *   captured for the record's units → nothing to do;
 *   open → capture:<id> replayed with the record's units (exactly what the
 *     request sent, so a capture that did land is recognised, never doubled);
 *   anything else (voided, another amount, a refused replay) → `review`
 *     (`settlement_failed`), where the pass above settles it from the ledger.
 * The checkpoint advances past a record only once it is settled in the ledger;
 * the ledger down ends the check, and the next pass starts at the same record.
 */
async function checkCaptures(ctx: ManagedAiContext, q: z.output<typeof ReconcileInput>, report: ReconcileReport): Promise<void> {
  for (let round = 0; round < CHECK_ROUNDS; round++) {
    const cp = await ctx.store.usage.capturesCheckpoint();
    if (!cp) return; // written by the migration that brought the check
    const ids = await ctx.store.reconciler.capturesAfter(cp, new Date(Date.now() - q.settledAfterSeconds * 1000), q.checkBatch);
    // Read again by id: a record may have moved on between the two reads (status checked again).
    const rows = (await recordsById(ctx, ids)).filter((r) => r.status === "completed" && r.holdId !== null && r.settledAt !== null);
    if (rows.length === 0) return;
    const holds = new Map((await ctx.ledgerCalls.holds([...new Set(rows.map((r) => r.holdId!))])).map((h) => [h.hold_id, h]));
    let through: Settled | undefined;
    try {
      for (const row of rows) {
        report.checked++;
        const hold = holds.get(row.holdId!);
        if (!(hold?.status === "captured" && BigInt(hold.captured_units) === row.finalUnits)) {
          await runWithContext({ requestId: row.id, actor: "system:reconciler" }, () => repairCapture(ctx, row, hold?.status ?? "missing", report));
        }
        through = row;
      }
    } finally {
      // Up to the last record settled in the ledger, also when the ledger went away after it.
      if (through) {
        await ctx.store.reconciler.advanceCapturesCheckpoint({ settledAt: through.settledAt!, id: through.id });
      }
    }
    if (rows.length < q.checkBatch) return;
  }
}

/** A completed record whose capture the ledger does not hold: replay it, or hand the record to review. */
async function repairCapture(ctx: ManagedAiContext, row: Settled, holdStatus: string, report: ReconcileReport): Promise<void> {
  if (holdStatus === "open" && row.finalUnits !== null) {
    try {
      const captured = await holdsOf(ctx).capture(row.id, row.holdId!, row.finalUnits, `managed request ${row.id}`);
      if (captured.kind === "settled" || (captured.hold.status === "captured" && BigInt(captured.hold.captured_units) === row.finalUnits)) {
        report.recaptured++;
        ctx.logger.warn({ request_id: row.id, units: row.finalUnits.toString() }, "a completed record's capture was missing; replayed");
        return;
      }
      ctx.logger.error({ err: captured.error, request_id: row.id }, "a completed record's capture was refused; the record goes to review");
    } catch (err) {
      // The ledger unreachable: the check stops here and starts again at this record.
      if (!isAppError(err) || err.code === "unavailable" || err.code === "internal_error") throw err;
      ctx.logger.error({ err, request_id: row.id }, "a completed record's capture was refused; the record goes to review");
    }
  } else {
    ctx.logger.error({ request_id: row.id, hold_status: holdStatus }, "a completed record disagrees with its hold; the record goes to review");
  }
  if (
    await moveRecord({
      ctx,
      input: { row, holdId: row.holdId, next: { status: "review", errorCode: "settlement_failed", finalUnits: null, refundedUnits: null } },
    })
  )
    report.toOperator++;
}

/**
 * The record's hold and its state (the hold protocol's `find`: the reservation replayed
 * when its id was never written; one taken only now is given back, never reserved).
 * A claim on an allotment is carved out of it first, unless the request posted its
 * charge from the allotment first: then that post is the outcome.
 */
async function holdOf(ctx: ManagedAiContext, row: UsageRecord): Promise<{ holdId: string | null; state: HoldState }> {
  if (!row.holdId && row.allotmentId) {
    const carved = await carvedHold({ ctx, input: { row: { ...row, allotmentId: row.allotmentId } } });
    if (carved.posted !== undefined) return { holdId: null, state: { status: "captured", capturedUnits: carved.posted, releasedUnits: 0n } };
    return holdsOf(ctx).find(recordHold(row), carved.holdId);
  }
  return holdsOf(ctx).find(recordHold(row), row.holdId);
}

/** The charge the request computed from its usage (the same units, so a replayed capture matches); null without usage. */
async function chargeOf(ctx: ManagedAiContext, row: UsageRecord): Promise<{ units: bigint; capped: boolean } | null> {
  const usage = usageOf(row.usageJson ? JSON.parse(row.usageJson) : null);
  if (!usage) return null;
  const price = await ctx.store.prices.get(row.priceId);
  if (!price) throw new Error(`record ${row.id}: its price ${row.priceId} is missing`);
  const cost = costUnits(usage.promptTokens, usage.completionTokens, price, BigInt(row.discountBps));
  return cost > row.reservedUnits ? { units: row.reservedUnits, capped: true } : { units: cost, capped: false };
}

type Outcome = "completed" | "failed" | "toOperator" | "unchanged";

async function reconcileRecord(ctx: ManagedAiContext, row: UsageRecord): Promise<Outcome> {
  // A claim on an allotment is fenced before it is carved out (docs/decisions/0028): the
  // record goes to review first, so a call that is in fact still running can no longer
  // settle it as its own (and post from the allotment); the next pass carves its hold.
  if (row.allotmentId && !row.holdId && row.status === "reserved") {
    // Its charge may have reached the ledger while the record's own write was lost (a
    // database that lost acknowledged commits in a crash): the ledger's post decides,
    // as a captured hold does for a hold of its own.
    // (post:<id> names the release of the record's carve too: only a post is a charge.)
    const [posted] = await ctx.ledgerCalls.transfers([postOperation(row.id)]);
    if (posted?.kind === "post") {
      return (await moveRecord({
        ctx,
        input: { row, holdId: null, next: { status: "completed", errorCode: null, finalUnits: BigInt(posted.units), refundedUnits: null } },
      }))
        ? "completed"
        : "unchanged";
    }
    return (await moveRecord({ ctx, input: { row, holdId: null, next: { status: "review", errorCode: INTERRUPTED, finalUnits: null, refundedUnits: null } } }))
      ? "toOperator"
      : "unchanged";
  }
  const { holdId, state } = await holdOf(ctx, row);
  const charge = await chargeOf(ctx, row);
  // The hold's state decides; an open one is settled by the rule (decide.ts): the charge
  // captured when it is known, voided when nothing is owed, else left for an operator.
  const rule = (s: HoldState): HoldDecision => {
    const d = decide(row, s);
    if (d.kind === "capture" && charge) return { kind: "capture", units: charge.units, reason: `managed request ${row.id}` };
    if (d.kind === "void") return { kind: "void", reason: `managed request ${row.id}: ${row.errorCode}` };
    return { kind: "wait" };
  };
  const outcome: HoldOutcome =
    holdId === null
      ? state !== "none" && state.status === "captured"
        ? { kind: "captured", holdId: "", capturedUnits: state.capturedUnits, releasedUnits: 0n }
        : { kind: "none" }
      : await holdsOf(ctx).settle(row.id, holdId, state, rule);
  const decision: Decision =
    outcome.kind === "captured"
      ? { kind: "completed", finalUnits: outcome.capturedUnits }
      : outcome.kind === "voided"
        ? { kind: "failed", refundedUnits: outcome.releasedUnits }
        : outcome.kind === "none"
          ? { kind: "failed", refundedUnits: 0n }
          : { kind: "operator" };
  if (decision.kind === "operator") {
    // A hold just carved out of an allotment is written on the record (it stays in review).
    if (row.allotmentId && row.status === "review" && !row.holdId && holdId)
      await moveRecord({ ctx, input: { row, holdId, next: { status: "review", errorCode: row.errorCode, finalUnits: null, refundedUnits: null } } });
    if (row.status !== "reserved") return "unchanged";
    return (await moveRecord({ ctx, input: { row, holdId, next: { status: "review", errorCode: INTERRUPTED, finalUnits: null, refundedUnits: null } } }))
      ? "toOperator"
      : "unchanged";
  }
  if (decision.kind === "completed") {
    const errorCode = charge?.capped ? "usage_over_reservation" : null;
    return (await moveRecord({ ctx, input: { row, holdId, next: { status: "completed", errorCode, finalUnits: decision.finalUnits, refundedUnits: null } } }))
      ? "completed"
      : "unchanged";
  }
  if (decision.kind === "failed") {
    const errorCode = row.errorCode ?? INTERRUPTED;
    return (await moveRecord({ ctx, input: { row, holdId, next: { status: "failed", errorCode, finalUnits: 0n, refundedUnits: decision.refundedUnits } } }))
      ? "failed"
      : "unchanged";
  }
  return "unchanged";
}
