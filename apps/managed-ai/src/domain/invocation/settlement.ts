import { AppError, isAppError } from "@gateway/errors";
import type { ManagedAiContext } from "../context.js";
import { costUnits } from "./cost.js";
import { unitsToUsdNumber } from "@gateway/contract/money";
import type { Priced as Plan } from "./plan.js";
import { carvedHold, carveReserve, type Carved } from "../allotments/carve.js";
import { holdsOf, recordHold } from "../usage/hold.js";
import { moveRecord } from "../usage/move.js";

/**
 * The money of one managed request, around its usage record. The record is
 * written before the ledger is asked for the hold, and every ledger call uses
 * an operation id derived from the record's id:
 *   reserve:<id>, capture:<id>, void:<id>
 * so a crash at any point leaves a record an operator can release (the hold
 * is found again by replaying the reservation) and no call can move money twice.
 */
export type Opened = {
  id: string;
  holdId: string | null;
  tenantId: string;
  apiKeyId: string | null;
  /** The allotment the reservation was claimed from (docs/decisions/0028); null: a hold of its own, or none. */
  allotment: { id: string; holdId: string } | null;
};

export type Usage = { promptTokens: bigint; completionTokens: bigint; raw: Record<string, unknown> };

/** The provider's usage, when it reports whole non-negative token counts. */
export function usageOf(value: unknown): Usage | null {
  if (!value || typeof value !== "object") return null;
  const u = value as Record<string, unknown>;
  const ok = (n: unknown) => typeof n === "number" && Number.isSafeInteger(n) && n >= 0;
  if (!ok(u.prompt_tokens) || !ok(u.completion_tokens)) return null;
  return { promptTokens: BigInt(u.prompt_tokens as number), completionTokens: BigInt(u.completion_tokens as number), raw: u };
}

export type OpenInput = {
  requestId: string;
  apiKeyId: string | null;
  idempotencyKey: string | null;
  stream: boolean;
  /** The API the request came through, recorded on the usage record (CONTRACT.md 6c); absent: not recorded. */
  api?: Api;
};

/** The public APIs a metered call comes through. */
export type Api = "chat_completions" | "messages" | "embeddings";

/**
 * Opens the usage record (status `reserved`) with its Idempotency-Key claim,
 * then takes the hold. A key is used up only by a request that obtained a
 * reservation: on insufficient balance the record and the claim go away again
 * (402, and the key can be retried). When the ledger cannot be reached the
 * outcome is unknown: the record is put in `review` for an operator.
 */
export async function openReservation({
  ctx,
  input: { plan, request: input },
}: {
  ctx: ManagedAiContext;
  input: { plan: Plan; request: OpenInput };
}): Promise<Opened> {
  const holdExpiresAt = new Date(Date.now() + ctx.holdTtlSeconds * 1000);
  const written = await ctx.records.open({
    id: input.requestId,
    mode: plan.mode,
    tenantId: plan.tenantId,
    apiKeyId: input.apiKeyId,
    serviceAlias: plan.serviceAlias,
    modelAlias: plan.modelAlias,
    priceId: plan.priceId,
    upstreamId: plan.upstream.id,
    discountBps: plan.discountBps,
    stream: input.stream,
    inputTokensBound: Number(plan.inputTokensBound),
    outputTokensCap: plan.outputTokensCap,
    reservedUnits: plan.reservedUnits,
    holdExpiresAt,
    idempotencyKey: input.idempotencyKey,
    ...(input.api ? { api: input.api } : {}),
  });
  if (!written) throw new AppError("conflict", "This Idempotency-Key was already used in the last 24 hours; nothing was replayed.");
  const allotment = written.allotmentId && written.allotmentHoldId ? { id: written.allotmentId, holdId: written.allotmentHoldId } : null;
  const opened: Opened = { id: input.requestId, holdId: null, tenantId: plan.tenantId, apiKeyId: input.apiKeyId, allotment };
  // A free request holds nothing; a byok request is recorded, never charged (docs/decisions/0025).
  if (plan.reservedUnits === 0n || plan.mode === "byok") return opened;
  // Claimed from the tenant's allotment in the record's own statement: no ledger call now.
  if (allotment) {
    ctx.allotments.touch(allotment.id);
    return opened;
  }
  // A hold of its own. The allotment that had no room gives its rest back first, so the
  // ledger decides this request on the whole balance (402 is always the ledger's own).
  if (written.ranOut) await ctx.allotments.freeze(written.ranOut);
  try {
    // Refused: what the tenant's allotments hold unclaimed goes back first (a 402 is decided on everything).
    const res = await holdsOf(ctx).open(recordHold({ id: input.requestId, tenantId: plan.tenantId, reservedUnits: plan.reservedUnits, holdExpiresAt }));
    ctx.allotments.refill(plan.tenantId, BigInt(res.balance?.available_units ?? "0"), plan.reservedUnits);
    return { ...opened, holdId: res.hold_id };
  } catch (err) {
    if (isAppError(err) && err.code === "insufficient_balance") {
      await refuse(ctx, plan, input);
      throw new AppError("insufficient_balance", "The available balance does not cover the worst-case cost of this request.", {
        extra: { pricing: { cost: unitsToUsdNumber(plan.reservedUnits) } },
      });
    }
    ctx.logger.warn({ err, request_id: input.requestId }, "reserve failed; the record goes to review");
    await markSettled(ctx, opened, { status: "review", errorCode: "ledger_unavailable" });
    throw new AppError("unavailable", "The balance could not be reserved; try again shortly.");
  }
}

/**
 * The ledger refused the hold: the record and its claim go away, with a `request_refused`
 * event. The record's `request_reserved` event goes with it through the outbox, under the
 * id the record's log gives it: the relay that tails the records may not have read the
 * row before it went (and if it did, the second copy is dropped as a duplicate).
 */
async function refuse(ctx: ManagedAiContext, plan: Plan, input: OpenInput): Promise<void> {
  await ctx.transact(async (tx, emit) => {
    if (
      !(await ctx.store.records.deleteRefused(tx, {
        id: input.requestId,
        tenantId: plan.tenantId,
        apiKeyId: input.apiKeyId,
        idempotencyKey: input.idempotencyKey,
      }))
    )
      return;
    // After the reserved event deleteRefused copied: the relay publishes in the outbox's order.
    await emit("managed_ai.request_refused", { request_id: input.requestId, tenant_id: plan.tenantId, key_id: input.apiKeyId, reason: "insufficient_balance" });
  });
}

type Outcome = { status: "completed" | "failed" | "review"; errorCode: string | null; finalUnits?: bigint; usage?: Usage };

/**
 * Writes the record's end state, once (only a `reserved` record changes; the row is its
 * `request_settled` event); false when it was no longer `reserved` (decided elsewhere meanwhile).
 */
async function markSettled(ctx: ManagedAiContext, opened: Opened, outcome: Outcome): Promise<boolean> {
  return ctx.records.settle({
    id: opened.id,
    status: outcome.status,
    errorCode: outcome.errorCode,
    holdId: opened.holdId,
    finalUnits: outcome.finalUnits ?? null,
    usageJson: outcome.usage ? JSON.stringify(outcome.usage.raw) : null,
  });
}

/**
 * The provider answered with usage: charge the contract's cost of it, at most
 * the reservation (a capped record says `usage_over_reservation`), and give the
 * rest of the hold back.
 *
 * The capture and the record's end state are sent at once (docs/decisions/0164):
 * two idempotent writes to two databases, one wait instead of two, and both are
 * done before the answer. A capture that fails moves the record on to `review`
 * (`settlement_failed`) with its hold, as before, where the reconciler replays
 * it. A crash between the two leaves a `completed` record whose capture may be
 * missing: the reconciler's check of settled records (`checkCaptures`) finds it
 * in the ledger or replays capture:<id>.
 */
export async function settleCompleted({
  ctx,
  input: { opened, plan, usage },
}: {
  ctx: ManagedAiContext;
  input: { opened: Opened; plan: Plan; usage: Usage };
}): Promise<bigint> {
  const cost = costUnits(usage.promptTokens, usage.completionTokens, plan.price, BigInt(plan.discountBps));
  // byok: the estimate bounds nothing (the customer's provider charges what it charges), so the
  // cost is never capped here; its spend budgets count at most the reservation (budgets/settle.ts).
  const over = plan.mode === "managed" && cost > plan.reservedUnits;
  const finalUnits = over ? plan.reservedUnits : cost;
  const errorCode = over ? "usage_over_reservation" : null;
  const settlement: Outcome = { status: "completed", errorCode, finalUnits, usage };
  const marked = markSettled(ctx, opened, settlement);
  if (opened.allotment) {
    // The record's statement gave back the unused part of the claim; the charge is posted
    // with the next batch (a crash before that: the allotment's closing posts it).
    let written: boolean;
    try {
      written = await marked;
    } catch (err) {
      await chargeUnwritten(ctx, opened, opened.allotment, settlement, err);
      return finalUnits;
    }
    if (!written) {
      await chargeCarved(ctx, opened, finalUnits);
      return finalUnits;
    }
    if (finalUnits > 0n) ctx.allotments.post({ requestId: opened.id, allotmentId: opened.allotment.id, holdId: opened.allotment.holdId, units: finalUnits });
    else ctx.allotments.touch(opened.allotment.id);
    return finalUnits;
  }
  if (!opened.holdId) {
    await marked;
    return finalUnits;
  }
  const [captured, written] = await Promise.allSettled([holdsOf(ctx).capture(opened.id, opened.holdId, finalUnits, `managed request ${opened.id}`), marked]);
  // Not written: the record stays `reserved`, and the reconciler settles it from the ledger's hold.
  if (written.status === "rejected") throw written.reason;
  // Captured now, or before with the same units (a conflict that says so); anything else waits in review.
  const capture = captured.status === "fulfilled" ? captured.value : null;
  if (!(capture?.kind === "settled" || (capture?.hold.status === "captured" && BigInt(capture.hold.captured_units) === finalUnits))) {
    const err = captured.status === "rejected" ? captured.reason : capture?.kind === "conflict" ? capture.error : undefined;
    ctx.logger.error({ err, request_id: opened.id }, "capture failed; the record goes to review with its hold");
    await captureFailed(ctx, opened, plan);
  }
  return finalUnits;
}

/**
 * A call whose record was fenced while it ran: the reconciler took it for an orphan
 * of a dead process (still `reserved` long after it began), or an operator took it
 * over past its hold's expiry (docs/decisions/0028, addendum of issue 40). Its claim
 * is (or is now) carved out of the allotment into a hold of its own. The charge is
 * now known: it is captured from that hold (capture:<id>, what any replay sends) and
 * the record completes (a call whose provider failed voids it and fails). Never
 * posted from the allotment, which no longer holds the claim. An operator's decision
 * that reached the ledger first stands: this capture is then refused, and the record
 * is the operator's to write.
 */
async function chargeCarved(ctx: ManagedAiContext, opened: Opened, finalUnits: bigint, errorCode: string | null = null): Promise<void> {
  const row = await ctx.store.usage.get(opened.id);
  if (row?.status !== "review" || !row.allotmentId) {
    ctx.logger.warn({ request_id: opened.id, status: row?.status }, "the record was settled elsewhere meanwhile; its charge is not posted");
    return;
  }
  try {
    // Fenced but not carved yet: the carve is the reconciler's own (a replay of the same reservation).
    const carved: Carved = row.holdId
      ? { holdId: row.holdId, replayed: true }
      : await carvedHold({ ctx, input: { row: { ...row, allotmentId: row.allotmentId } } });
    if (carved.posted !== undefined) {
      ctx.logger.warn({ request_id: opened.id }, "the request's charge was posted from its allotment already; the reconciler completes its record");
      return;
    }
    const holdId = carved.holdId;
    // Nothing owed (the provider failed): void:<id>, as the request's own void would be. An operator's
    // decision that reached the ledger first stands (the protocol answers the hold as it is).
    const outcome = await holdsOf(ctx).settle(opened.id, holdId, { status: "open", capturedUnits: 0n, releasedUnits: 0n }, () =>
      finalUnits === 0n
        ? { kind: "void", reason: `managed request ${opened.id}: provider failed` }
        : { kind: "capture", units: finalUnits, reason: `managed request ${opened.id}` },
    );
    if (outcome.kind === "voided" && finalUnits === 0n) {
      await moveRecord({
        ctx,
        input: { row, holdId, next: { status: "failed", errorCode: errorCode ?? row.errorCode, finalUnits: 0n, refundedUnits: outcome.releasedUnits } },
      });
    } else if (outcome.kind === "captured" && outcome.capturedUnits === finalUnits) {
      await moveRecord({ ctx, input: { row, holdId, next: { status: "completed", errorCode: null, finalUnits, refundedUnits: null } } });
    } else {
      ctx.logger.warn(
        { request_id: opened.id, outcome: outcome.kind },
        "a fenced record's hold was decided otherwise; it waits for the reconciler or an operator",
      );
    }
  } catch (err) {
    ctx.logger.error(
      { err, request_id: opened.id },
      "settling a fenced record's hold failed or was decided otherwise; it waits for the reconciler or an operator",
    );
  }
}

/**
 * The settlement statement failed for a request on an allotment (the database away,
 * a statement that kept failing): what the provider reported must not be lost
 * (docs/decisions/0028, addendum of issue 40). The charge goes to the ledger at once,
 * as the request's post (post:<id>, its one draw on the allotment, so a fence and
 * carve of the record can no longer take it too), and the record's write is retried
 * in the background. Should this process die first, the reconciler finds the post
 * when it looks at the record (`transfers(post:<id>)` before its fence, and a carve
 * refused by it) and completes the record from it. A post the ledger cannot take now
 * is retried with the write.
 */
async function chargeUnwritten(
  ctx: ManagedAiContext,
  opened: Opened,
  allotment: { id: string; holdId: string },
  settlement: Outcome,
  cause: unknown,
): Promise<void> {
  ctx.logger.error({ err: cause, request_id: opened.id }, "writing a settlement failed; its charge is posted now and the write retried");
  const finalUnits = settlement.finalUnits ?? 0n;
  let posted = finalUnits === 0n;
  const post = async () => {
    if (posted) return;
    const [refusal] = await ctx.ledgerCalls.postCharges([{ requestId: opened.id, holdId: allotment.holdId, units: finalUnits }]);
    posted = true;
    // Refused: the record was fenced and carved meanwhile; the fenced record's settlement applies.
    if (refusal) await chargeCarved(ctx, opened, finalUnits);
  };
  await post().catch((err: unknown) => ctx.logger.warn({ err, request_id: opened.id }, "posting the charge of an unwritten settlement failed; retried"));
  retryInBackground(ctx, opened.id, async () => {
    await post();
    // Written, or fenced meanwhile (then the post stands, and the reconciler completes the record from it).
    await markSettled(ctx, opened, settlement);
    ctx.allotments.touch(allotment.id);
  });
}

/**
 * Writes the record's end state, then `then(written)`; when the statement fails, both
 * are retried in the background (a request on an allotment that is not written keeps
 * its claim, until the reconciler would fence it).
 */
async function writeOrRetry(ctx: ManagedAiContext, opened: Opened, outcome: Outcome, then: (written: boolean) => Promise<void>): Promise<void> {
  let written: boolean;
  try {
    written = await markSettled(ctx, opened, outcome);
  } catch (err) {
    ctx.logger.error({ err, request_id: opened.id }, "writing a settlement failed; retried");
    retryInBackground(ctx, opened.id, async () => then(await markSettled(ctx, opened, outcome)));
    return;
  }
  await then(written);
}

/** Runs `attempt` until it succeeds, waiting 0.2 s, then twice as long each time, at most 30 s (for the life of the process). */
function retryInBackground(ctx: ManagedAiContext, requestId: string, attempt: () => Promise<void>): void {
  let delay = 200;
  const run = () =>
    void attempt().catch((err: unknown) => {
      ctx.logger.warn({ err, request_id: requestId, retry_ms: delay }, "retrying a settlement's write");
      setTimeout(run, delay).unref?.();
      delay = Math.min(delay * 2, 30_000);
    });
  setTimeout(run, delay).unref?.();
}

/**
 * The record was written `completed` while its capture failed: it goes to
 * `review` (`settlement_failed`, the usage kept, nothing charged yet), exactly as
 * a capture that failed before the record was written left it, with a
 * `managed_ai.request_reconciled` event saying so.
 */
async function captureFailed(ctx: ManagedAiContext, opened: Opened, plan: Plan): Promise<void> {
  await ctx.transact(async (tx, emit) => {
    if (!(await ctx.store.records.toSettlementFailed(tx, opened.id))) return;
    await emit("managed_ai.request_reconciled", {
      request_id: opened.id,
      tenant_id: opened.tenantId,
      key_id: opened.apiKeyId,
      from_status: "completed",
      from_error_code: null,
      status: "review",
      error_code: "settlement_failed",
      reserved_units: plan.reservedUnits.toString(),
      final_units: null,
      refunded_units: null,
    });
  });
}

/** The provider failed: release the whole hold (or claim); the record is `failed` with the failure's code. */
export async function settleFailed({
  ctx,
  input: { opened, errorCode },
}: {
  ctx: ManagedAiContext;
  input: { opened: Opened; errorCode: string };
}): Promise<void> {
  if (opened.allotment) {
    const allotmentId = opened.allotment.id;
    // Not written: fenced meanwhile (its carved hold is voided), or the statement failed (retried).
    await writeOrRetry(ctx, opened, { status: "failed", errorCode, finalUnits: 0n }, async (written) => {
      if (!written) await chargeCarved(ctx, opened, 0n, errorCode);
      ctx.allotments.touch(allotmentId);
    });
    return;
  }
  if (opened.holdId) {
    try {
      const voided = await holdsOf(ctx).void(opened.id, opened.holdId, `managed request ${opened.id}: ${errorCode}`);
      if (voided.kind === "conflict" && voided.hold.status !== "voided") throw voided.error;
    } catch (err) {
      ctx.logger.error({ err, request_id: opened.id }, "void failed; the record goes to review with its hold");
      await markSettled(ctx, opened, { status: "review", errorCode });
      return;
    }
  }
  await markSettled(ctx, opened, { status: "failed", errorCode, finalUnits: 0n });
}

/**
 * Usage is unknown (a stream without usage, the deadline): the hold stays for an
 * operator. A claim on an allotment first becomes a hold of its own (carved out
 * of the allotment in one ledger step), so the operator decides it as any other;
 * if that fails the record waits in review without it, and the reconciler carves it.
 */
export async function settleReview({
  ctx,
  input: { opened, plan, errorCode },
}: {
  ctx: ManagedAiContext;
  input: { opened: Opened; plan: Plan; errorCode: string };
}): Promise<void> {
  if (opened.allotment) {
    let holdId: string | null = null;
    try {
      holdId = (
        await ctx.ledgerCalls.reserve(carveReserve({ id: opened.id, tenantId: opened.tenantId, reservedUnits: plan.reservedUnits }, opened.allotment.holdId))
      ).hold_id;
    } catch (err) {
      ctx.logger.warn({ err, request_id: opened.id }, "carving the reservation out of its allotment failed; the reconciler will");
    }
    const allotmentId = opened.allotment.id;
    await writeOrRetry(ctx, { ...opened, holdId }, { status: "review", errorCode }, async () => ctx.allotments.touch(allotmentId));
    return;
  }
  await markSettled(ctx, opened, { status: "review", errorCode });
}
