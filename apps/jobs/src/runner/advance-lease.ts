import type { JobsContext } from "../domain/context.js";
import type { Job, Prisma, TronLease } from "../generated/prisma/client.js";
import { changeJobStatus } from "../domain/jobs/change-status.js";
import { leaseHold, leaseHolds, settled } from "../domain/leases/hold.js";
import { TERMINAL, type JobStatus } from "../domain/jobs/view.js";
import type { RefusalCode } from "../tron/provider.js";

/** What the runner does with the message that asked for the step: acknowledge it, or see it again later. */
export type StepOutcome = { kind: "done" } | { kind: "later"; delayMs: number };

const DONE: StepOutcome = { kind: "done" };

/** How long a lease may wait in `reserve` for the request that created it before the runner gives up on it. */
export const RESERVE_GRACE_MS = 30_000;

type Outcome = { to: JobStatus; ledger: "capture" | "void"; result?: Prisma.InputJsonValue; error?: { code: string; message: string } };

/**
 * One step of an energy lease's job, for the `job.status_changed` message of
 * status `status` (docs/decisions/0103). Each message drives the work of its
 * own status: `pending` (sandbox: finish; live: once reserved, start running),
 * `running` (order, verify, settle). Every external call is idempotent or asked
 * once (the job id is the provider's client order id; a provider that does not
 * deduplicate it, itrx, is asked at most once per lease, its intent recorded first
 * and an answer lost reconciled on chain, docs/decisions/0245; the ledger
 * operation ids derive from the job id) and every state change is a conditional
 * update, so a step repeated after a crash or by a concurrent redelivery changes
 * nothing twice.
 */
export async function advanceLease({ ctx, input }: { ctx: JobsContext; input: { jobId: string; status: string; touch?: () => void } }): Promise<StepOutcome> {
  const [job, lease] = await Promise.all([
    ctx.prisma.job.findUnique({ where: { id: input.jobId } }),
    ctx.prisma.tronLease.findUnique({ where: { jobId: input.jobId } }),
  ]);
  if (!job || !lease || TERMINAL.has(job.status) || job.status !== input.status) return DONE;
  if (job.status === "pending") return start(ctx, job, lease);
  return run(ctx, job, lease, input.touch ?? (() => undefined));
}

async function start(ctx: JobsContext, job: Job, first: TronLease): Promise<StepOutcome> {
  let lease = first;
  if (lease.dryRun) {
    await finish(ctx, lease, "pending", {
      to: "succeeded",
      ledger: "void",
      result: {
        dry_run: true,
        lease_id: lease.id,
        receiver: lease.receiver,
        energy: lease.energy,
        duration_seconds: lease.durationSeconds,
        cost_units: lease.costUnits.toString(),
      },
    });
    return DONE;
  }
  if (lease.stage === "reserve") {
    if (Date.now() - lease.createdAt.getTime() < RESERVE_GRACE_MS) return { kind: "later", delayMs: 250 };
    // Decided first (a repeat of the request can no longer confirm it), then carried out.
    const marked = await ctx.prisma.tronLease.updateMany({ where: { id: lease.id, stage: "reserve" }, data: { stage: "abandon" } });
    if (marked.count === 0) return { kind: "later", delayMs: 0 };
    lease = { ...lease, stage: "abandon" };
  }
  if (lease.stage === "abandon") {
    await abandonUnconfirmed(ctx, lease);
    return DONE;
  }
  await ctx.transact((tx, emit) => changeJobStatus(tx, emit, { jobId: job.id, from: "pending", to: "running" }));
  ctx.kickCallbacks();
  return DONE;
}

/**
 * The request that created the lease never confirmed its reservation (it
 * died, or the ledger did not answer it): the caller may not know the job
 * exists, so nothing may be charged. The lease is marked `abandon` first; then
 * whatever reservation exists is released (the same operation ids, so a
 * repetition after a crash is harmless) and the job fails.
 */
async function abandonUnconfirmed(ctx: JobsContext, lease: TronLease): Promise<void> {
  // Refused for want of balance: there never was a reservation; one taken only by this replay is given back.
  await leaseHolds(ctx).recover(leaseHold(lease, ctx.tron), null, () => ({ kind: "void", reason: `energy lease ${lease.id} unconfirmed` }));
  await ctx.transact(async (tx, emit) => {
    const moved = await tx.tronLease.updateMany({ where: { id: lease.id, stage: "abandon" }, data: { stage: "done" } });
    if (moved.count === 0) return;
    await changeJobStatus(tx, emit, {
      jobId: lease.jobId,
      from: "pending",
      to: "failed",
      error: { code: "reservation_unconfirmed", message: "The lease's reservation was never confirmed to the caller; nothing was charged." },
    });
  });
  ctx.kickCallbacks();
}

async function run(ctx: JobsContext, job: Job, first: TronLease, touch: () => void): Promise<StepOutcome> {
  let lease = first;
  const reload = async () => (lease = await ctx.prisma.tronLease.findUniqueOrThrow({ where: { id: lease.id } }));
  /** Decides the lease's end; false when its delegation transactions already verified another lease (nothing decided). */
  const decide = async (outcome: Outcome & { claims?: string[] }): Promise<boolean> => {
    const { claims, ...decided } = outcome;
    if (claims && claims.length > 0) {
      // The transactions that verify this lease are claimed with the decision, one receiver at a time, so no other lease counts them.
      const claimed = await ctx.prisma.$transaction(async (tx) => {
        await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext(${`tron-receiver:${lease.receiver}`}))`;
        const taken = await tx.tronLease.count({ where: { id: { not: lease.id }, delegationTxids: { hasSome: claims } } });
        if (taken > 0) return false;
        await tx.tronLease.updateMany({ where: { id: lease.id, stage: lease.stage }, data: { stage: "settle", outcome: decided, delegationTxids: claims } });
        return true;
      });
      if (!claimed) {
        ctx.logger.warn({ job_id: lease.jobId, txids: claims }, "delegation transactions already verified another lease; will look again");
        return false;
      }
    } else {
      await ctx.prisma.tronLease.updateMany({ where: { id: lease.id, stage: lease.stage }, data: { stage: "settle", outcome: decided } });
    }
    await reload();
    return true;
  };
  for (;;) {
    touch();
    switch (lease.stage) {
      case "order": {
        if (lease.orderIntentAt && !ctx.provider.repeatable) {
          // An earlier attempt may have placed an order whose answer was lost: never ask again.
          const found = await reconcile(ctx, lease);
          if (found.kind === "verified") {
            if (!(await decide(succeeded(ctx, lease, found)))) return { kind: "later", delayMs: ctx.tron.verifyPollMs };
          } else if (Date.now() >= lease.orderIntentAt.getTime() + ctx.tron.verifyTimeoutSeconds * 1000) {
            await decide({
              to: "expired",
              ledger: "void",
              error: {
                code: "provider_unreachable",
                message: `The energy provider's answer to the order was lost and no delegation to the receiver appeared in time; the reservation was released.${found.reason ? ` Last check: ${found.reason}.` : ""}`,
              },
            });
          } else {
            if (found.unreachable) ctx.logger.warn({ job_id: lease.jobId, reason: found.reason }, "TRON node unreachable; will reconcile later");
            return { kind: "later", delayMs: ctx.tron.verifyPollMs };
          }
          break;
        }
        if (!ctx.provider.repeatable) {
          // The intent (and where on chain its window starts) is written before the provider is asked.
          const head = await ctx.node.head();
          if (head.kind === "unreachable") {
            if (Date.now() - job.createdAt.getTime() >= ctx.tron.verifyTimeoutSeconds * 1000) {
              await decide({ to: "expired", ledger: "void", error: { code: "provider_unreachable", message: "The TRON node could not be reached in time." } });
              break;
            }
            ctx.logger.warn({ job_id: lease.jobId, reason: head.reason }, "TRON node unreachable before ordering; will retry");
            return { kind: "later", delayMs: ctx.tron.verifyPollMs };
          }
          const marked = await ctx.prisma.tronLease.updateMany({
            where: { id: lease.id, stage: "order", orderIntentAt: null },
            data: { orderIntentAt: new Date(), orderIntentBlock: BigInt(head.block) },
          });
          if (marked.count === 0) return { kind: "later", delayMs: 0 };
          await reload();
        }
        const ordered = await ctx.provider.order({
          clientOrderId: lease.jobId,
          receiver: lease.receiver,
          energy: lease.energy,
          durationSeconds: lease.durationSeconds,
        });
        if (ordered.kind === "ordered") {
          await ctx.transact(async (tx, emit) => {
            const moved = await tx.tronLease.updateMany({
              where: { id: lease.id, stage: "order" },
              data: {
                stage: "verify",
                providerOrderId: ordered.orderId,
                delegator: ordered.delegator ?? null,
                verifyDeadline: new Date(Date.now() + ctx.tron.verifyTimeoutSeconds * 1000),
              },
            });
            if (moved.count === 1) {
              await emit("tron.lease_ordered", {
                lease_id: lease.id,
                job_id: lease.jobId,
                tenant_id: lease.tenantId,
                provider_order_id: ordered.orderId,
                receiver: lease.receiver,
                energy: lease.energy,
              });
            }
          });
          await reload();
        } else if (ordered.kind === "refused") {
          refusedByProvider(ctx, lease.jobId, ordered.code, ordered.reason);
          await decide({ to: "failed", ledger: "void", error: { code: ordered.code, message: REFUSAL_MESSAGES[ordered.code](ordered.reason) } });
        } else if (
          // An order that may have been placed is reconciled (its own window), never given up unseen.
          (ordered.notPlaced || ctx.provider.repeatable) &&
          Date.now() - job.createdAt.getTime() >= ctx.tron.verifyTimeoutSeconds * 1000
        ) {
          await decide({
            to: "expired",
            ledger: "void",
            error: { code: "provider_unreachable", message: "The energy provider could not be reached in time." },
          });
        } else {
          // Nothing placed: the intent is withdrawn and the order may be asked for again.
          if (ordered.notPlaced && !ctx.provider.repeatable) {
            await ctx.prisma.tronLease.updateMany({ where: { id: lease.id, stage: "order" }, data: { orderIntentAt: null, orderIntentBlock: null } });
          }
          ctx.logger.warn({ job_id: lease.jobId, reason: ordered.reason, maybe_placed: !ordered.notPlaced }, "energy provider unreachable; will retry");
          return { kind: "later", delayMs: ctx.tron.verifyPollMs };
        }
        break;
      }
      case "verify": {
        const verdict = await verify(ctx, lease);
        if (verdict.kind === "failed") {
          refusedByProvider(ctx, lease.jobId, verdict.code, verdict.reason);
          await decide({ to: "failed", ledger: "void", error: { code: verdict.code, message: REFUSAL_MESSAGES[verdict.code](verdict.reason) } });
        } else if (verdict.kind === "verified") {
          if (!(await decide(succeeded(ctx, lease, verdict)))) return { kind: "later", delayMs: ctx.tron.verifyPollMs };
        } else if (lease.verifyDeadline && Date.now() >= lease.verifyDeadline.getTime()) {
          const detail = verdict.reason ? ` Last check: ${verdict.reason}.` : "";
          await decide({
            to: "expired",
            ledger: "void",
            error: { code: "verification_timeout", message: `The delegation did not appear on chain in time; the reservation was released.${detail}` },
          });
        } else {
          if (verdict.unreachable) ctx.logger.warn({ job_id: lease.jobId, reason: verdict.reason }, "energy provider or TRON node unreachable; will retry");
          return { kind: "later", delayMs: ctx.tron.verifyPollMs };
        }
        break;
      }
      case "settle": {
        const outcome = lease.outcome as Outcome;
        await finish(ctx, lease, "running", outcome);
        return DONE;
      }
      default:
        return DONE;
    }
  }
}

const REFUSAL_MESSAGES: Record<RefusalCode, (reason: string) => string> = {
  provider_refused: (r) => `The energy provider refused the order (${r}).`,
  provider_balance_short: (r) => `The energy provider's account balance is too low for this order; the operator must top it up (${r}).`,
  provider_auth_failed: (r) =>
    `The energy provider refused the gateway's API key or signature; the operator must check TRON_PROVIDER_API_KEY / TRON_PROVIDER_API_SECRET (${r}).`,
  provider_order_failed: (r) => `The energy provider ended the order without delegating (${r}).`,
};

/** Refusals that need the operator (money or credentials at the provider) are logged as errors; the others as warnings. */
function refusedByProvider(ctx: JobsContext, jobId: string, code: RefusalCode, reason: string): void {
  const operator = code === "provider_balance_short" || code === "provider_auth_failed";
  ctx.logger[operator ? "error" : "warn"](
    { job_id: jobId, code, reason, provider: ctx.provider.name },
    operator ? "energy provider refused: operator action needed" : "energy provider refused the order",
  );
}

/** The success decided for a verified lease: capture, with what verified it (and the transactions it claims). */
function succeeded(ctx: JobsContext, lease: TronLease, verdict: Extract<Verdict, { kind: "verified" }>): Outcome & { claims: string[] } {
  const period = ctx.provider.period(lease.durationSeconds);
  return {
    to: "succeeded",
    ledger: "capture",
    claims: verdict.txids,
    result: {
      dry_run: false,
      lease_id: lease.id,
      provider: ctx.provider.name,
      provider_order_id: lease.providerOrderId,
      ...(period ? { provider_period: period.name } : {}),
      receiver: lease.receiver,
      energy: lease.energy,
      delegated_energy: verdict.energy,
      verified_by: verdict.by,
      ...(verdict.reconciled ? { reconciled: true } : {}),
      ...(verdict.txids.length > 0 ? { delegation_txids: verdict.txids } : {}),
      duration_seconds: lease.durationSeconds,
      cost_units: lease.costUnits.toString(),
    },
  };
}

/**
 * An order attempt whose answer was lost, reconciled by the receiver and the time window
 * (docs/decisions/0245): the energy delegations to the receiver in the blocks since the
 * intent was written, confirmed in irreversible blocks, less those that verified another
 * lease. Enough of them verify the lease as its provider's order would have.
 */
async function reconcile(ctx: JobsContext, lease: TronLease): Promise<Exclude<Verdict, { kind: "failed" }>> {
  const scan = await ctx.node.delegationsTo(lease.receiver, Number(lease.orderIntentBlock ?? 0n));
  if (scan.kind === "unreachable") return { kind: "waiting", reason: `node: ${scan.reason}`, unreachable: true };
  const claimed = new Set(
    (
      await ctx.prisma.tronLease.findMany({ where: { id: { not: lease.id }, delegationTxids: { hasSome: scan.txids } }, select: { delegationTxids: true } })
    ).flatMap((l) => l.delegationTxids),
  );
  const candidates = scan.txids.filter((t) => !claimed.has(t));
  if (candidates.length === 0) return { kind: "waiting", reason: "no delegation to the receiver since the order was attempted" };
  const check = await ctx.node.delegatedByTransactions(candidates, lease.receiver);
  if (check.kind === "unreachable") return { kind: "waiting", reason: `node: ${check.reason}`, unreachable: true };
  if (delivered(ctx, check.energy, lease.energy)) {
    return { kind: "verified", energy: check.energy, by: "delegation_transaction", txids: check.confirmed, reconciled: true };
  }
  return { kind: "waiting", reason: `${check.energy} of ${lease.energy} energy delegated to the receiver since the order was attempted` };
}

type Verdict =
  | { kind: "verified"; energy: number; by: "delegation_transaction" | "delegated_sum"; txids: string[]; reconciled?: boolean }
  | { kind: "failed"; code: RefusalCode; reason: string }
  | { kind: "waiting"; reason?: string; unreachable?: boolean };

/**
 * Is the lease's energy delegated (docs/decisions/0106)? By the delegation
 * transactions the provider reports, each confirmed on chain; only when it
 * reports none and named its delegator, by the sum delegated from it to the
 * receiver (which cannot tell two leases to one receiver apart).
 */
async function verify(ctx: JobsContext, lease: TronLease): Promise<Verdict> {
  const f = await ctx.provider.fulfilment({ orderId: lease.providerOrderId ?? "", clientOrderId: lease.jobId });
  if (f.kind === "failed") return f;
  if (f.kind === "unreachable") return { kind: "waiting", reason: `provider: ${f.reason}`, unreachable: true };
  if (f.txids.length > 0) {
    const check = await ctx.node.delegatedByTransactions(f.txids, lease.receiver);
    if (check.kind === "unreachable") return { kind: "waiting", reason: `node: ${check.reason}`, unreachable: true };
    if (delivered(ctx, check.energy, lease.energy)) return { kind: "verified", energy: check.energy, by: "delegation_transaction", txids: check.confirmed };
    const rejected = check.rejected.map((r) => `${r.txid}: ${r.reason}`).join("; ");
    return {
      kind: "waiting",
      reason: `${check.energy} of ${lease.energy} energy confirmed by the reported transactions${rejected ? ` (${rejected})` : ""}`.slice(0, 500),
    };
  }
  if (!lease.delegator) return { kind: "waiting", reason: "the provider has reported no delegation transaction yet" };
  const check = await ctx.node.delegatedEnergy(lease.delegator, lease.receiver);
  if (check.kind === "unreachable") return { kind: "waiting", reason: `node: ${check.reason}`, unreachable: true };
  if (delivered(ctx, check.energy, lease.energy)) return { kind: "verified", energy: check.energy, by: "delegated_sum", txids: [] };
  return { kind: "waiting", reason: `${check.energy} of ${lease.energy} energy delegated` };
}

/**
 * Is `energy` (measured on chain, at the network's ratio as it is now) the `ordered`
 * energy? Within TRON_DELIVERY_TOLERANCE_BPS below it (docs/decisions/0245): the ratio
 * that turns the delegated TRX into energy drifts between the provider's delegation and
 * the check, so an exact `>=` can fail a lease the provider delivered.
 */
export function delivered(ctx: Pick<JobsContext, "tron">, energy: number, ordered: number): boolean {
  return BigInt(energy) * 10_000n >= BigInt(ordered) * BigInt(10_000 - ctx.tron.deliveryToleranceBps);
}

/** Settles the money as decided (idempotent operation ids), then the status, in that order. */
async function finish(ctx: JobsContext, lease: TronLease, from: JobStatus, outcome: Outcome): Promise<void> {
  if (!lease.dryRun && lease.holdId) {
    const holds = leaseHolds(ctx);
    if (outcome.ledger === "capture") settled(await holds.capture(lease.jobId, lease.holdId, lease.costUnits, `energy lease ${lease.id}`));
    else settled(await holds.void(lease.jobId, lease.holdId, `energy lease ${lease.id}: ${outcome.error?.code ?? outcome.to}`));
  }
  await ctx.transact(async (tx, emit) => {
    const moved = await tx.tronLease.updateMany({ where: { id: lease.id, stage: lease.stage }, data: { stage: "done" } });
    if (moved.count === 0) return;
    await changeJobStatus(tx, emit, {
      jobId: lease.jobId,
      from,
      to: outcome.to,
      ...(outcome.result !== undefined ? { result: outcome.result } : {}),
      ...(outcome.error ? { error: outcome.error } : {}),
    });
  });
  ctx.kickCallbacks();
}
