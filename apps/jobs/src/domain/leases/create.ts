import { createHash } from "node:crypto";
import { z } from "zod";
import { AppError, isAppError, parseInput } from "@gateway/errors";
import { ulid } from "@gateway/contract/ids";
import { Id, NonNegativeUnits, OptionalIdempotencyKey } from "@gateway/contract";
import type { JobsContext } from "../context.js";
import type { TronLease } from "../../generated/prisma/client.js";
import { checkCallback, sealCallbackSecret, secretColumns } from "../../callbacks/target.js";
import { Duration, Energy, Receiver, TenantId } from "../quotes/schemas.js";
import { leaseHold, leaseHolds, settled } from "./hold.js";
import { unitsToUsdNumber } from "@gateway/contract/money";

export const LEASE_JOB_TYPE = "tron.energy_lease";

export const CreateLeaseInput = z.object({
  tenant_id: TenantId,
  quote_id: Id,
  max_cost_units: NonNegativeUnits,
  receiver: Receiver,
  energy: Energy,
  duration_seconds: Duration,
  callback_url: z.string().default(""),
  callback_secret: z.string().default(""),
  idempotency_key: OptionalIdempotencyKey,
});
export type CreateLeaseInput = z.input<typeof CreateLeaseInput>;
export type CreateLeaseResult = { jobId: string; leaseId: string; dryRun: boolean };

const conflict = (message: string, extra?: Record<string, unknown>) => new AppError("conflict", message, extra ? { extra } : {});

/**
 * Creates a lease and its job from one of the tenant's quotes (CONTRACT.md 9).
 * The rows exist before any money moves, so nothing can be reserved for a
 * lease that is not recorded; in live mode the quote cost is then reserved
 * (operation `reserve:<job id>`), and a refusal for want of balance removes
 * the lease again (402, the Idempotency-Key usable anew). The same key with
 * the same parameters answers with the first job, reserving at most once.
 */
export async function createLease({ ctx, input }: { ctx: JobsContext; input: CreateLeaseInput }): Promise<CreateLeaseResult> {
  const q = parseInput(CreateLeaseInput, input);
  const callback = await checkCallback(ctx.callbacks, q.callback_url, q.callback_secret);
  const fingerprint = createHash("sha256")
    .update(JSON.stringify([q.quote_id, q.max_cost_units.toString(), q.receiver, q.energy, q.duration_seconds, q.callback_url, q.callback_secret]))
    .digest("hex");
  const key = q.idempotency_key || null;
  const byKey = () => ctx.prisma.tronLease.findUnique({ where: { tenantId_idempotencyKey: { tenantId: q.tenant_id, idempotencyKey: key! } } });

  if (key) {
    const existing = await byKey();
    if (existing) return repeat(ctx, existing, fingerprint);
  }

  const quote = await ctx.prisma.tronQuote.findUnique({ where: { id: q.quote_id } });
  if (!quote || quote.tenantId !== q.tenant_id) throw conflict("Unknown quote_id: ask for a quote first.");
  if (quote.expiresAt.getTime() <= Date.now()) throw conflict("The quote has expired: ask for a new one.");
  if (quote.receiver !== q.receiver || quote.energy !== q.energy || quote.durationSeconds !== q.duration_seconds) {
    throw conflict("receiver, energy and duration_seconds must be those of the quote.");
  }
  if (quote.costUnits > q.max_cost_units) throw conflict("The quote's cost is above max_cost.", { pricing: { cost: unitsToUsdNumber(quote.costUnits) } });

  const suffix = ulid();
  const dryRun = ctx.tron.mode === "sandbox";
  const lease = {
    id: `lease_${suffix}`,
    jobId: `job_${suffix}`,
    tenantId: q.tenant_id,
    quoteId: quote.id,
    receiver: quote.receiver,
    energy: quote.energy,
    durationSeconds: quote.durationSeconds,
    costUnits: quote.costUnits,
    dryRun,
    idempotencyKey: key,
    fingerprint,
    stage: dryRun ? "order" : "reserve",
  };
  const created = await ctx.transact(async (tx, emit) => {
    const inserted = await tx.tronLease.createMany({ data: [lease], skipDuplicates: true });
    if (inserted.count === 0) return false; // the same key, concurrently: answered below from the winner
    // Sandbox never calls a callback URL, so it keeps none.
    const target = callback && !dryRun;
    await tx.job.create({
      data: {
        id: lease.jobId,
        tenantId: lease.tenantId,
        type: LEASE_JOB_TYPE,
        status: "pending",
        input: {
          lease_id: lease.id,
          quote_id: lease.quoteId,
          receiver: lease.receiver,
          energy: lease.energy,
          duration_seconds: lease.durationSeconds,
          cost_units: lease.costUnits.toString(),
          dry_run: dryRun,
        },
        callbackState: target ? "pending" : "none",
      },
    });
    if (target) {
      const sealed = sealCallbackSecret(ctx.keyring, lease.jobId, callback.secret);
      await tx.jobCallbackTarget.create({ data: { jobId: lease.jobId, url: callback.url, ...secretColumns(sealed) } });
    }
    await emit("job.status_changed", { job_id: lease.jobId, tenant_id: lease.tenantId, type: LEASE_JOB_TYPE, from: null, to: "pending", error_code: null });
    return true;
  });
  if (!created) {
    const winner = key ? await byKey() : null;
    if (!winner) throw new AppError("unavailable", "The lease could not be recorded; try again.");
    return repeat(ctx, winner, fingerprint);
  }
  const row = await ctx.prisma.tronLease.findUniqueOrThrow({ where: { id: lease.id } });
  if (!dryRun) await ensureReserved(ctx, row);
  return { jobId: lease.jobId, leaseId: lease.id, dryRun };
}

async function repeat(ctx: JobsContext, existing: TronLease, fingerprint: string): Promise<CreateLeaseResult> {
  if (existing.fingerprint !== fingerprint) throw conflict("This Idempotency-Key was used with other lease parameters.");
  if (!existing.dryRun && existing.stage === "reserve") await ensureReserved(ctx, existing);
  return { jobId: existing.jobId, leaseId: existing.id, dryRun: existing.dryRun };
}

/** Reserves the lease's cost (idempotent by its operation id) and records the hold. */
async function ensureReserved(ctx: JobsContext, lease: TronLease): Promise<void> {
  let holdId: string;
  try {
    // Refused: the tenant's allotments give back what no call claimed first (docs/decisions/0028).
    const reserved = await leaseHolds(ctx).open(leaseHold(lease, ctx.tron));
    holdId = reserved.hold_id;
  } catch (err) {
    if (isAppError(err) && err.code === "insufficient_balance") {
      if (await withdraw(ctx, lease)) throw new AppError("insufficient_balance", "The available balance does not cover the quote's cost.");
      return; // a concurrent identical request got the reservation first
    }
    throw err;
  }
  const moved = await ctx.prisma.tronLease.updateMany({ where: { id: lease.id, stage: "reserve" }, data: { holdId, stage: "order" } });
  if (moved.count === 0) {
    const now = await ctx.prisma.tronLease.findUnique({ where: { id: lease.id } });
    if (!now) {
      // Withdrawn by a concurrent request that was refused: give this hold back.
      settled(await leaseHolds(ctx).void(lease.jobId, holdId, `energy lease ${lease.id} withdrawn`));
      throw new AppError("insufficient_balance", "The available balance does not cover the quote's cost.");
    }
  }
}

/**
 * Removes a lease that could not be reserved (nothing was charged), with a
 * `failed` status change for the audit trail. False when the lease had
 * meanwhile been reserved by a concurrent identical request.
 */
async function withdraw(ctx: JobsContext, lease: TronLease): Promise<boolean> {
  return ctx.transact(async (tx, emit) => {
    const removed = await tx.tronLease.deleteMany({ where: { id: lease.id, stage: "reserve" } });
    if (removed.count === 0) return (await tx.tronLease.findUnique({ where: { id: lease.id } })) === null;
    await tx.jobCallbackTarget.deleteMany({ where: { jobId: lease.jobId } });
    await tx.job.deleteMany({ where: { id: lease.jobId } });
    await emit("job.status_changed", {
      job_id: lease.jobId,
      tenant_id: lease.tenantId,
      type: LEASE_JOB_TYPE,
      from: "pending",
      to: "failed",
      error_code: "insufficient_balance",
    });
    return true;
  });
}
