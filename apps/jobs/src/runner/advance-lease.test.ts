import { describe, expect, it } from "vitest";
import { createQuote } from "../domain/quotes/create.js";
import { createLease } from "../domain/leases/create.js";
import { contextPerFile } from "../testing/context-per-file.js";
import { advanceLease, RESERVE_GRACE_MS } from "./advance-lease.js";

const RECEIVER = "TNQDRWktv1qrLnDT5ZL5ThHZJgGspaEHgM";
const t = contextPerFile();
let n = 0;

async function newLease(options: { sandbox?: boolean; callback?: boolean } = {}) {
  const tenant = `ten_${++n}`;
  t.ledger.credit(tenant, 10_000n);
  const ctx = options.sandbox ? { ...t.ctx, tron: { ...t.ctx.tron, mode: "sandbox" as const } } : t.ctx;
  const q = await createQuote({ ctx, input: { tenant_id: tenant, receiver: RECEIVER, energy: 65_000, duration_seconds: 3_600 } });
  const r = await createLease({
    ctx,
    input: {
      tenant_id: tenant,
      quote_id: q.id,
      max_cost_units: "2700",
      receiver: RECEIVER,
      energy: 65_000,
      duration_seconds: 3_600,
      ...(options.callback ? { callback_url: "https://hooks.example.com/j", callback_secret: "0123456789abcdef" } : {}),
    },
  });
  return { tenant, jobId: r.jobId };
}

const step = (jobId: string, status: string) => advanceLease({ ctx: t.ctx, input: { jobId, status } });
const job = (id: string) => t.ctx.prisma.job.findUniqueOrThrow({ where: { id } });

describe("advanceLease", () => {
  it("finishes a sandbox lease at once: succeeded, dry run, no order, no money", async () => {
    const { jobId } = await newLease({ sandbox: true, callback: true });
    expect(await step(jobId, "pending")).toEqual({ kind: "done" });
    expect(await job(jobId)).toMatchObject({ status: "succeeded", result: { dry_run: true }, callbackState: "none" });
    expect(t.provider.requests.filter((r) => r.clientOrderId === jobId)).toHaveLength(0);
    expect(await t.ctx.prisma.jobCallbackDelivery.count({ where: { jobId } })).toBe(0);
  });

  it("runs a live lease: running, one order, verification, capture, succeeded; repeats change nothing", async () => {
    const { tenant, jobId } = await newLease({ callback: true });
    expect(await step(jobId, "pending")).toEqual({ kind: "done" });
    expect((await job(jobId)).status).toBe("running");
    t.node.energy = 0;
    expect(await step(jobId, "running")).toEqual({ kind: "later", delayMs: 100 });
    expect(await step(jobId, "running")).toEqual({ kind: "later", delayMs: 100 });
    expect(t.provider.requests.filter((r) => r.clientOrderId === jobId)).toHaveLength(1);
    t.node.energy = 65_000;
    expect(await step(jobId, "running")).toEqual({ kind: "done" });
    expect(await job(jobId)).toMatchObject({ status: "succeeded", result: { dry_run: false, delegated_energy: 65_000, verified_by: "delegated_sum" } });
    expect(t.ledger.available.get(tenant)).toBe(10_000n - 2_700n);
    expect(t.ledger.reserved(tenant)).toBe(0n);
    // A redelivered message of an old status is acknowledged without effect.
    expect(await step(jobId, "running")).toEqual({ kind: "done" });
    expect(await step(jobId, "pending")).toEqual({ kind: "done" });
    expect(t.ledger.calls.filter((c) => c.operation_id === `capture:${jobId}`)).toHaveLength(1);
    // One job.updated delivery per status change after creation.
    const deliveries = await t.ctx.prisma.jobCallbackDelivery.findMany({ where: { jobId }, orderBy: { seq: "asc" } });
    expect(deliveries.map((d) => (d.job as { status: string }).status)).toEqual(["running", "succeeded"]);
    const statuses = (await t.outbox()).filter((e) => e.type === "job.status_changed" && e.payload.job_id === jobId).map((e) => e.payload.to);
    expect(statuses).toEqual(["pending", "running", "succeeded"]);
  });

  it("verifies a delivery within the tolerance below the ordered energy (the ratio drifts), not one further below", async () => {
    const { jobId } = await newLease();
    await step(jobId, "pending");
    // 1 % (TRON_DELIVERY_TOLERANCE_BPS=100) below 65 000 is 64 350: one less waits.
    t.node.energy = 64_349;
    expect(await step(jobId, "running")).toEqual({ kind: "later", delayMs: 100 });
    t.node.energy = 64_350;
    expect(await step(jobId, "running")).toEqual({ kind: "done" });
    expect(await job(jobId)).toMatchObject({ status: "succeeded", result: { energy: 65_000, delegated_energy: 64_350 } });
    t.node.energy = 0;
  });

  it("settles again after a crash between the ledger call and the status commit", async () => {
    const { tenant, jobId } = await newLease();
    await step(jobId, "pending");
    const lease = await t.ctx.prisma.tronLease.findUniqueOrThrow({ where: { jobId } });
    // As if a step had decided and captured, then died before committing the status.
    await t.ctx.prisma.tronLease.update({
      where: { id: lease.id },
      data: { stage: "settle", outcome: { to: "succeeded", ledger: "capture", result: { dry_run: false } } },
    });
    await t.ctx.ledger.capture({ operation_id: `capture:${jobId}`, hold_id: lease.holdId!, units: "2700", reason: "x" });
    expect(await step(jobId, "running")).toEqual({ kind: "done" });
    expect((await job(jobId)).status).toBe("succeeded");
    expect(t.ledger.available.get(tenant)).toBe(10_000n - 2_700n);
  });

  it("voids and fails when the provider refuses", async () => {
    const { tenant, jobId } = await newLease();
    await step(jobId, "pending");
    t.provider.next = "refused";
    try {
      expect(await step(jobId, "running")).toEqual({ kind: "done" });
    } finally {
      t.provider.next = "ordered";
    }
    expect(await job(jobId)).toMatchObject({ status: "failed", error: { code: "provider_refused" } });
    expect(t.ledger.available.get(tenant)).toBe(10_000n);
  });

  it("fails with its own code, voided, when the provider's own balance is short", async () => {
    const { tenant, jobId } = await newLease();
    await step(jobId, "pending");
    t.provider.next = "refused";
    t.provider.refusal = "provider_balance_short";
    try {
      expect(await step(jobId, "running")).toEqual({ kind: "done" });
    } finally {
      t.provider.next = "ordered";
      t.provider.refusal = "provider_refused";
    }
    expect(await job(jobId)).toMatchObject({ status: "failed", error: { code: "provider_balance_short", message: expect.stringContaining("operator") } });
    expect(t.ledger.available.get(tenant)).toBe(10_000n);
    expect(t.ledger.calls.filter((c) => c.operation_id === `void:${jobId}`)).toHaveLength(1);
  });

  it("verifies by the reported delegation transaction, not by what else the receiver holds", async () => {
    t.provider.reportsTransactions = true;
    try {
      const { tenant, jobId } = await newLease();
      await step(jobId, "pending");
      // Another lease's delegation to the same receiver fills the sum; this order reports no transaction yet.
      t.node.energy = 10_000_000;
      expect(await step(jobId, "running")).toEqual({ kind: "later", delayMs: 100 });
      const lease = await t.ctx.prisma.tronLease.findUniqueOrThrow({ where: { jobId } });
      expect(lease).toMatchObject({ stage: "verify", delegator: null });
      // It reports one that the chain does not confirm (yet), then one that it does.
      t.provider.txids.set(lease.providerOrderId!, ["aa".repeat(32)]);
      expect(await step(jobId, "running")).toEqual({ kind: "later", delayMs: 100 });
      t.node.transactions.set("bb".repeat(32), 65_000);
      t.provider.txids.set(lease.providerOrderId!, ["aa".repeat(32), "bb".repeat(32)]);
      expect(await step(jobId, "running")).toEqual({ kind: "done" });
      expect(await job(jobId)).toMatchObject({
        status: "succeeded",
        result: { verified_by: "delegation_transaction", delegation_txids: ["bb".repeat(32)], delegated_energy: 65_000, provider: "fake" },
      });
      expect(t.ledger.available.get(tenant)).toBe(10_000n - 2_700n);
    } finally {
      t.provider.reportsTransactions = false;
      t.node.energy = 0;
    }
  });

  it("never counts one delegation transaction for two leases (a provider reporting it twice)", async () => {
    t.provider.reportsTransactions = true;
    try {
      const tx = "dd".repeat(32);
      t.node.transactions.set(tx, 65_000);
      const first = await newLease();
      const second = await newLease();
      for (const { jobId } of [first, second]) {
        await step(jobId, "pending");
        expect(await step(jobId, "running")).toEqual({ kind: "later", delayMs: 100 });
        const lease = await t.ctx.prisma.tronLease.findUniqueOrThrow({ where: { jobId } });
        t.provider.txids.set(lease.providerOrderId!, [tx]);
      }
      expect(await step(first.jobId, "running")).toEqual({ kind: "done" });
      expect(await job(first.jobId)).toMatchObject({ status: "succeeded", result: { delegation_txids: [tx] } });
      // The second lease waits (one step, no loop) and is never captured on the first one's energy.
      expect(await step(second.jobId, "running")).toEqual({ kind: "later", delayMs: 100 });
      expect(await t.ctx.prisma.tronLease.findUniqueOrThrow({ where: { jobId: second.jobId } })).toMatchObject({ stage: "verify", delegationTxids: [] });
      expect(t.ledger.calls.filter((c) => c.operation_id === `capture:${second.jobId}`)).toHaveLength(0);
    } finally {
      t.provider.reportsTransactions = false;
      t.node.transactions.delete("dd".repeat(32));
    }
  });

  it("says why at expiry when the reported transaction never confirms", async () => {
    t.provider.reportsTransactions = true;
    try {
      const { tenant, jobId } = await newLease();
      await step(jobId, "pending");
      await step(jobId, "running");
      const lease = await t.ctx.prisma.tronLease.findUniqueOrThrow({ where: { jobId } });
      t.provider.txids.set(lease.providerOrderId!, ["cc".repeat(32)]);
      await t.ctx.prisma.tronLease.update({ where: { jobId }, data: { verifyDeadline: new Date(Date.now() - 1) } });
      expect(await step(jobId, "running")).toEqual({ kind: "done" });
      expect(await job(jobId)).toMatchObject({
        status: "expired",
        error: { code: "verification_timeout", message: expect.stringContaining("not found on chain") },
      });
      expect(t.ledger.available.get(tenant)).toBe(10_000n);
    } finally {
      t.provider.reportsTransactions = false;
    }
  });

  it("fails, voided, when the provider ends the order without delegating", async () => {
    const { tenant, jobId } = await newLease();
    await step(jobId, "pending");
    t.provider.fulfilmentNext = { kind: "failed", code: "provider_order_failed", reason: "refunded (status 41)" };
    try {
      expect(await step(jobId, "running")).toEqual({ kind: "done" });
    } finally {
      t.provider.fulfilmentNext = undefined;
    }
    expect(await job(jobId)).toMatchObject({ status: "failed", error: { code: "provider_order_failed" } });
    expect(t.ledger.available.get(tenant)).toBe(10_000n);
  });

  it("waits for an unreachable provider, then expires past the deadline", async () => {
    const { tenant, jobId } = await newLease();
    await step(jobId, "pending");
    t.provider.next = "unreachable";
    try {
      expect(await step(jobId, "running")).toEqual({ kind: "later", delayMs: 100 });
      await t.ctx.prisma.job.update({ where: { id: jobId }, data: { createdAt: new Date(Date.now() - 61_000) } });
      expect(await step(jobId, "running")).toEqual({ kind: "done" });
    } finally {
      t.provider.next = "ordered";
    }
    expect(await job(jobId)).toMatchObject({ status: "expired", error: { code: "provider_unreachable" } });
    expect(t.ledger.available.get(tenant)).toBe(10_000n);
  });

  it("expires and refunds when the delegation is not seen before the deadline", async () => {
    const { tenant, jobId } = await newLease();
    await step(jobId, "pending");
    t.node.energy = 64_349; // below the 1 % tolerance
    expect((await step(jobId, "running")).kind).toBe("later");
    await t.ctx.prisma.tronLease.update({ where: { jobId }, data: { verifyDeadline: new Date(Date.now() - 1) } });
    expect(await step(jobId, "running")).toEqual({ kind: "done" });
    expect(await job(jobId)).toMatchObject({ status: "expired", error: { code: "verification_timeout" } });
    expect(t.ledger.available.get(tenant)).toBe(10_000n);
    expect(t.ledger.reserved(tenant)).toBe(0n);
  });

  it("gives up on a lease whose creation never confirmed its reservation, charging nothing", async () => {
    const { tenant, jobId } = await newLease();
    // As if the creating request had died after recording the lease, before its reservation was recorded.
    await t.ctx.prisma.tronLease.update({ where: { jobId }, data: { stage: "reserve", holdId: null } });
    expect(await step(jobId, "pending")).toEqual({ kind: "later", delayMs: 250 });
    await t.ctx.prisma.tronLease.update({ where: { jobId }, data: { createdAt: new Date(Date.now() - RESERVE_GRACE_MS - 1) } });
    expect(await step(jobId, "pending")).toEqual({ kind: "done" });
    expect(await job(jobId)).toMatchObject({ status: "failed", error: { code: "reservation_unconfirmed" } });
    expect(t.ledger.available.get(tenant)).toBe(10_000n);
    expect(t.ledger.reserved(tenant)).toBe(0n);
  });
});
