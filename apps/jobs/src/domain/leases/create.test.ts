import { describe, expect, it } from "vitest";
import { contextPerFile } from "../../testing/context-per-file.js";
import { createQuote } from "../quotes/create.js";
import { createLease, type CreateLeaseInput } from "./create.js";

const RECEIVER = "TNQDRWktv1qrLnDT5ZL5ThHZJgGspaEHgM";
const t = contextPerFile();
let n = 0;

async function leaseInput(tenant: string, extra: Partial<CreateLeaseInput> = {}): Promise<CreateLeaseInput> {
  const q = await createQuote({ ctx: t.ctx, input: { tenant_id: tenant, receiver: RECEIVER, energy: 65_000, duration_seconds: 3_600 } });
  return { tenant_id: tenant, quote_id: q.id, max_cost_units: q.costUnits.toString(), receiver: RECEIVER, energy: 65_000, duration_seconds: 3_600, ...extra };
}

const tenant = (units: bigint) => {
  const id = `ten_${++n}`;
  t.ledger.credit(id, units);
  return id;
};

describe("createLease (live)", () => {
  it("records the lease and its pending job, reserves the quote cost once, and emits the status event", async () => {
    const id = tenant(10_000n);
    const r = await createLease({ ctx: t.ctx, input: await leaseInput(id) });
    expect(r.dryRun).toBe(false);
    expect(r.jobId.slice(4)).toBe(r.leaseId.slice(6));
    const lease = await t.ctx.prisma.tronLease.findUniqueOrThrow({ where: { id: r.leaseId } });
    expect(lease).toMatchObject({ stage: "order", costUnits: 2_700n, holdId: expect.stringMatching(/^hold_/) });
    expect(await t.ctx.prisma.job.findUniqueOrThrow({ where: { id: r.jobId } })).toMatchObject({
      status: "pending",
      type: "tron.energy_lease",
      callbackState: "none",
    });
    expect(t.ledger.reserved(id)).toBe(2_700n);
    expect(t.ledger.calls.filter((c) => c.operation_id === `reserve:${r.jobId}`)).toHaveLength(1);
    expect((await t.outbox()).some((e) => e.type === "job.status_changed" && e.payload.job_id === r.jobId && e.payload.to === "pending")).toBe(true);
  });

  it("answers concurrent identical requests under one key with one job and one reservation", async () => {
    const id = tenant(10_000n);
    const input = await leaseInput(id, { idempotency_key: "k-1" });
    const results = await Promise.all(Array.from({ length: 6 }, () => createLease({ ctx: t.ctx, input })));
    expect(new Set(results.map((r) => r.jobId)).size).toBe(1);
    expect(await t.ctx.prisma.tronLease.count({ where: { tenantId: id } })).toBe(1);
    expect(t.ledger.reserved(id)).toBe(2_700n);
    await expect(createLease({ ctx: t.ctx, input: { ...input, max_cost_units: "99999" } })).rejects.toMatchObject({ code: "conflict" });
  });

  it("removes a lease the balance does not cover (402) and lets its key be used again", async () => {
    const id = tenant(100n);
    const input = await leaseInput(id, { idempotency_key: "k-2" });
    await expect(createLease({ ctx: t.ctx, input })).rejects.toMatchObject({ code: "insufficient_balance" });
    expect(await t.ctx.prisma.tronLease.count({ where: { tenantId: id } })).toBe(0);
    expect(await t.ctx.prisma.job.count({ where: { tenantId: id } })).toBe(0);
    t.ledger.credit(id, 10_000n);
    const r = await createLease({ ctx: t.ctx, input });
    expect(t.ledger.reserved(id)).toBe(2_700n);
    expect(await t.ctx.prisma.job.findUniqueOrThrow({ where: { id: r.jobId } })).toMatchObject({ status: "pending" });
  });

  it("keeps the lease when the ledger does not answer, and a repeat under the key reserves it", async () => {
    const id = tenant(10_000n);
    const input = await leaseInput(id, { idempotency_key: "k-3" });
    const { AppError } = await import("@gateway/errors");
    t.ledger.failNext = new AppError("unavailable", "ledger down");
    await expect(createLease({ ctx: t.ctx, input })).rejects.toMatchObject({ code: "unavailable" });
    const stuck = await t.ctx.prisma.tronLease.findFirstOrThrow({ where: { tenantId: id } });
    expect(stuck.stage).toBe("reserve");
    const r = await createLease({ ctx: t.ctx, input });
    expect(r.leaseId).toBe(stuck.id);
    expect((await t.ctx.prisma.tronLease.findUniqueOrThrow({ where: { id: stuck.id } })).stage).toBe("order");
    expect(t.ledger.reserved(id)).toBe(2_700n);
  });

  it("refuses unknown, foreign, expired and differing quotes, and a cost above max_cost (409)", async () => {
    const id = tenant(10_000n);
    const other = tenant(10_000n);
    const conflict = { code: "conflict" };
    await expect(createLease({ ctx: t.ctx, input: { ...(await leaseInput(id)), quote_id: "quote_none" } })).rejects.toMatchObject(conflict);
    await expect(createLease({ ctx: t.ctx, input: { ...(await leaseInput(other)), tenant_id: id } })).rejects.toMatchObject(conflict);
    await expect(createLease({ ctx: t.ctx, input: { ...(await leaseInput(id)), energy: 70_000 } })).rejects.toMatchObject(conflict);
    await expect(createLease({ ctx: t.ctx, input: { ...(await leaseInput(id)), max_cost_units: "2699" } })).rejects.toMatchObject({
      code: "conflict",
      extra: { pricing: { cost: 0.27 } },
    });
    const expired = await leaseInput(id);
    await t.ctx.prisma.tronQuote.update({ where: { id: expired.quote_id }, data: { expiresAt: new Date(Date.now() - 1) } });
    await expect(createLease({ ctx: t.ctx, input: expired })).rejects.toMatchObject({ code: "conflict", message: expect.stringMatching(/expired/) });
    await expect(createLease({ ctx: t.ctx, input: { ...(await leaseInput(id)), energy: 999 } })).rejects.toMatchObject({ code: "invalid_request" });
    expect(t.ledger.reserved(id)).toBe(0n);
  });

  it("stores the callback secret sealed, and none at all in sandbox", async () => {
    const id = tenant(10_000n);
    const secret = "a-callback-secret-of-some-length";
    const live = await createLease({ ctx: t.ctx, input: await leaseInput(id, { callback_url: "https://hooks.example.com/j", callback_secret: secret }) });
    const target = await t.ctx.prisma.jobCallbackTarget.findUniqueOrThrow({ where: { jobId: live.jobId } });
    expect(Buffer.from(target.secretCiphertext).includes(Buffer.from(secret))).toBe(false);
    const sandbox = await createLease({
      ctx: { ...t.ctx, tron: { ...t.ctx.tron, mode: "sandbox" } },
      input: await leaseInput(id, { callback_url: "https://hooks.example.com/j", callback_secret: secret }),
    });
    expect(sandbox.dryRun).toBe(true);
    expect(await t.ctx.prisma.jobCallbackTarget.findUnique({ where: { jobId: sandbox.jobId } })).toBeNull();
    expect(t.ledger.calls.some((c) => c.operation_id === `reserve:${sandbox.jobId}`)).toBe(false);
  });
});
