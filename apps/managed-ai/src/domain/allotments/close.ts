import { isAppError } from "@gateway/errors";
import { closeOperation, MAX_BATCH_ITEMS } from "@gateway/ledger-client";
import { runWithContext } from "@gateway/logger";
import type { ManagedAiContext } from "../context.js";

export type CloseOptions = {
  /** An open allotment without a claim for this long closes. */
  idleSeconds: number;
  /** Any open allotment older than this closes (a new one opens at the next request). */
  maxAgeSeconds: number;
  /** Allotments worked on per pass. */
  limit?: number;
  /** An allotment not ready to close is looked at again this long later, doubling with each pass (default 5). */
  retryBaseSeconds?: number;
  /**
   * Posts short of the charges are replayed only once the allotment has had no
   * settlement for this long (default 0: at once). A settlement's charge is posted by
   * its process's next batch (a linger, a ledger call, retries while the ledger is
   * away): a pass right after the last settlements would otherwise find those posts
   * on their way and replay every charge of the allotment.
   */
  postGraceSeconds?: number;
};

export type CloseReport = { closing: number; closed: number; reposted: number; abandoned: number; waiting: number; posting: number };

/** The ledger takes at most 500 movements per ApplyBatch. */
const POSTS_PER_CALL = MAX_BATCH_ITEMS;

/**
 * The reconciler's part of allotments (docs/decisions/0028), once per pass:
 *  1. open allotments idle for `idleSeconds` or older than `maxAgeSeconds` stop
 *     taking claims (closing);
 *  2. an allotment left `opening` (its process died while the ledger was asked)
 *     is found in the ledger by replaying allot:<id>: taken → closing, refused →
 *     the row goes;
 *  3. a closing allotment whose records are all settled (none `reserved`, none in
 *     review waiting for its hold to be carved: the reconciler's pass before this
 *     one turns the orphans of a dead process into review records with holds of
 *     their own) has its charges checked: the ledger's posts must add up to the
 *     final charges of its completed records. Missing posts are replayed
 *     (post:<id>, so a post that did land is not doubled); when they add up, the
 *     rest of the hold is voided (close:<id>) and the allotment is closed.
 * Every step is a replay of the allotment's own operation ids, so a pass that
 * stops anywhere leaves nothing the next one cannot finish.
 */
export async function closeAllotments({ ctx, input: options }: { ctx: ManagedAiContext; input: CloseOptions }): Promise<CloseReport> {
  const report: CloseReport = { closing: 0, closed: 0, reposted: 0, abandoned: 0, waiting: 0, posting: 0 };
  const limit = options.limit ?? 100;
  const closing = await ctx.store.allotments.closeIdle(options.idleSeconds, options.maxAgeSeconds);
  report.closing = closing.length;

  const stale = await ctx.store.allotments.staleOpenings(limit);
  for (const a of stale) {
    try {
      const res = await ctx.ledgerCalls.reserve(ctx.store.allotments.reserveRequest(a));
      await ctx.store.allotments.openingFound(a.id, res.hold_id);
    } catch (err) {
      if (isAppError(err) && (err.code === "insufficient_balance" || err.code === "invalid_request")) {
        await ctx.store.allotments.openingAbandoned(a.id);
        report.abandoned++;
      } else {
        await checkLater(ctx, a.id, options);
        ctx.logger.warn({ err, allotment_id: a.id }, "finding a stale allotment in the ledger failed; a later pass tries again");
      }
    }
  }

  // Releases a crash or a failed call left unconfirmed are sent again (each a replay when it landed).
  await ctx.allotments.resendReleases().catch((err: unknown) => ctx.logger.warn({ err }, "sending allotments' releases again failed; the next pass will"));

  // Due ones only, so that allotments waiting for their records never keep the others from closing.
  const candidates = await ctx.store.allotments.dueClosings(limit);
  for (const a of candidates) {
    let outcome: Outcome;
    try {
      outcome = await runWithContext({ requestId: a.id, actor: "system:reconciler" }, () =>
        closeOne(ctx, { id: a.id, holdId: a.holdId!, settledAt: a.updatedAt }, options.postGraceSeconds ?? 0),
      );
    } catch (err) {
      await checkLater(ctx, a.id, options);
      // The ledger unreachable: every other allotment would fail alike; the next pass goes on.
      if (isAppError(err) && err.code === "unavailable") throw err;
      ctx.logger.warn({ err, allotment_id: a.id }, "closing an allotment failed; a later pass tries again");
      continue;
    }
    report[outcome]++;
    // Waiting for its records: later and later. Posts just replayed or on their way: at the back of the due ones.
    if (outcome === "waiting") await checkLater(ctx, a.id, options);
    else if (outcome === "reposted" || outcome === "posting") await ctx.store.allotments.checkAgain(a.id, "now");
  }
  // Claims no replica reported (one that died within its linger) reach the balance views.
  await ctx.allotments.reportLive().catch((err: unknown) => ctx.logger.warn({ err }, "reporting live allotments failed; the next pass will"));
  if (report.closing + report.closed + report.reposted + report.abandoned > 0) ctx.logger.info({ allotments: report }, "allotments closed");
  return report;
}

/**
 * An allotment that was not ready (records in flight, posts replayed, a failed step)
 * is looked at again later, each time twice as late (5 s, 10 s, ... at most 10 min),
 * behind the ones that are due.
 */
async function checkLater(ctx: ManagedAiContext, id: string, options: CloseOptions): Promise<void> {
  await ctx.store.allotments.checkAgain(id, { baseSeconds: options.retryBaseSeconds ?? 5 });
}

type Outcome = "closed" | "reposted" | "waiting" | "posting";

/** `settledAt`: the allotment row's `updated_at`, which every settlement of one of its records sets. */
async function closeOne(ctx: ManagedAiContext, a: { id: string; holdId: string; settledAt: Date }, postGraceSeconds: number): Promise<Outcome> {
  const { id, holdId } = a;
  if ((await ctx.store.allotments.recordsInFlight(id)) > 0) return "waiting";
  const charges = await ctx.store.allotments.chargesOf(id);
  const owed = charges.reduce((sum, c) => sum + c.units, 0n);
  const hold = await ctx.ledgerCalls.hold(holdId);
  if (hold.status !== "open") {
    await ctx.store.allotments.markClosed(id);
    return "closed";
  }
  const posted = BigInt(hold.captured_units || "0");
  if (posted < owed) {
    // The last settlements' posts may be on their way (this process's batch or another's).
    if (Date.now() - a.settledAt.getTime() < postGraceSeconds * 1_000) return "posting";
    // Charges a crash kept from their batch: every charge replayed, each under its own
    // operation id (the ledger answers those that landed with their stored result).
    for (let i = 0; i < charges.length; i += POSTS_PER_CALL) {
      const batch = charges.slice(i, i + POSTS_PER_CALL).map((c) => ({ requestId: c.id, holdId, units: c.units }));
      const refusals = await ctx.ledgerCalls.postCharges(batch);
      const refused: string[] = [];
      refusals.forEach((refusal, j) => {
        if (refusal) {
          refused.push(charges[i + j]!.id);
          ctx.logger.error(
            { allotment_id: id, request_id: charges[i + j]!.id, code: refusal.code, message: refusal.message },
            "an allotment charge was refused; its record goes to review with its usage",
          );
        }
      });
      await ctx.allotments.chargesRefused(refused);
    }
    ctx.logger.warn({ allotment_id: id, posted: posted.toString(), owed: owed.toString() }, "an allotment's posts were short of its charges; replayed");
    return "reposted";
  }
  if (posted > owed) {
    ctx.logger.error(
      { allotment_id: id, posted: posted.toString(), owed: owed.toString() },
      "an allotment's posts exceed its records' charges; left open for an operator",
    );
    return "waiting";
  }
  await ctx.ledgerCalls.void({ operation_id: closeOperation(id), hold_id: holdId, reason: `allotment ${id} closed` });
  await ctx.store.allotments.markClosed(id);
  return "closed";
}
