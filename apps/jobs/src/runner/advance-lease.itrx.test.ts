import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { MOCK_ITRX_API_KEY, MOCK_ITRX_API_SECRET, startTronMock, type TronMock } from "@gateway/testkit";
import { createLease } from "../domain/leases/create.js";
import { createQuote } from "../domain/quotes/create.js";
import { createTestContext, type TestContext } from "../testing/context.js";
import { ItrxEnergyProvider } from "../tron/itrx.js";
import { HttpTronNode } from "../tron/node.js";
import { advanceLease } from "./advance-lease.js";

// A live lease through the itrx adapter and the TRON node adapter, against the testkit's mocks of both.
const RECEIVER = "TNQDRWktv1qrLnDT5ZL5ThHZJgGspaEHgM";
let t: TestContext;
let tron: TronMock;
let n = 0;

beforeAll(async () => {
  tron = await startTronMock();
  t = await createTestContext({
    provider: new ItrxEnergyProvider({ baseUrl: tron.itrxUrl, apiKey: MOCK_ITRX_API_KEY, apiSecret: MOCK_ITRX_API_SECRET, timeoutMs: 1_000 }),
    node: new HttpTronNode({ baseUrl: tron.nodeUrl, timeoutMs: 1_000 }),
  });
});
afterAll(async () => {
  await t?.close();
  await tron?.close();
});
beforeEach(() => tron.set({ itrx: {} }));

async function newLease(durationSeconds = 3_600) {
  const tenant = `ten_itrx_${++n}`;
  t.ledger.credit(tenant, 100_000n);
  const q = await createQuote({ ctx: t.ctx, input: { tenant_id: tenant, receiver: RECEIVER, energy: 65_000, duration_seconds: durationSeconds } });
  const r = await createLease({
    ctx: t.ctx,
    input: { tenant_id: tenant, quote_id: q.id, max_cost_units: q.costUnits.toString(), receiver: RECEIVER, energy: 65_000, duration_seconds: durationSeconds },
  });
  return { tenant, jobId: r.jobId, quote: q };
}
const step = (jobId: string, status: string) => advanceLease({ ctx: t.ctx, input: { jobId, status } });
const job = (id: string) => t.ctx.prisma.job.findUniqueOrThrow({ where: { id } });
const posts = (jobId: string) => tron.itrxRequests.filter((r) => r.method === "POST" && (r.body as { out_trade_no?: string })?.out_trade_no === jobId);
const orders = (jobId: string) => [...tron.itrxOrders.values()].filter((o) => o.outTradeNo === jobId);

describe("a live lease through itrx", () => {
  it("is quoted with the covering period, ordered once, verified by its delegation transaction and captured once", async () => {
    const { tenant, jobId, quote } = await newLease(5_400);
    expect(quote).toMatchObject({ provider: "itrx", providerPeriod: { name: "1D", seconds: 86_400 } });
    const cost = quote.costUnits;
    await step(jobId, "pending");
    expect(await step(jobId, "running")).toEqual({ kind: "done" });
    const [order] = orders(jobId);
    expect(order).toMatchObject({ energy: 65_000, period: "1D", receiver: RECEIVER, status: 40 });
    expect(posts(jobId)).toEqual([expect.objectContaining({ signed: true })]);
    expect(await job(jobId)).toMatchObject({
      status: "succeeded",
      result: {
        provider: "itrx",
        provider_order_id: order!.serial,
        provider_period: "1D",
        verified_by: "delegation_transaction",
        delegation_txids: order!.txids,
      },
    });
    expect(t.ledger.available.get(tenant)).toBe(100_000n - cost);
    expect(t.ledger.calls.filter((c) => c.operation_id === `capture:${jobId}`)).toHaveLength(1);
    expect(await step(jobId, "running")).toEqual({ kind: "done" });
    expect(t.ledger.calls.filter((c) => c.operation_id === `capture:${jobId}`)).toHaveLength(1);
  });

  it("refuses at the quote an energy below the provider's reported minimum (live mode), before anything is held or ordered", async () => {
    tron.set({ itrx: { minimumOrderEnergy: 40_000 } });
    const input = { tenant_id: "ten_itrx_min", receiver: RECEIVER, energy: 39_999, duration_seconds: 3_600 };
    // The provider instance caches the minimum: a fresh one sees this one.
    const provider = new ItrxEnergyProvider({ baseUrl: tron.itrxUrl, apiKey: MOCK_ITRX_API_KEY, apiSecret: MOCK_ITRX_API_SECRET, timeoutMs: 1_000 });
    const ctx = { ...t.ctx, provider };
    await expect(createQuote({ ctx, input })).rejects.toMatchObject({
      code: "invalid_request",
      message: expect.stringContaining("at least 40000"),
      extra: { minimum_energy: 40_000 },
    });
    expect(await createQuote({ ctx, input: { ...input, energy: 40_000 } })).toMatchObject({ energy: 40_000 });
    // Sandbox asks no provider and refuses nothing below it.
    expect(await createQuote({ ctx: { ...ctx, tron: { ...ctx.tron, mode: "sandbox" } }, input })).toMatchObject({ energy: 39_999 });
    expect(await t.ctx.prisma.tronQuote.count({ where: { tenantId: "ten_itrx_min" } })).toBe(2);
  });

  it("waits for a slow order, then verifies it", async () => {
    tron.set({ itrx: { fulfilment: { afterQueries: 2 } } });
    const { jobId } = await newLease();
    await step(jobId, "pending");
    expect(await step(jobId, "running")).toEqual({ kind: "later", delayMs: 100 });
    expect(await step(jobId, "running")).toEqual({ kind: "later", delayMs: 100 });
    expect(await step(jobId, "running")).toEqual({ kind: "done" });
    expect((await job(jobId)).status).toBe("succeeded");
    expect(posts(jobId)).toHaveLength(1);
  });

  it("voids a refused order: the provider's balance is short", async () => {
    tron.set({ itrx: { balanceSun: 10 } });
    const { tenant, jobId } = await newLease();
    await step(jobId, "pending");
    expect(await step(jobId, "running")).toEqual({ kind: "done" });
    expect(await job(jobId)).toMatchObject({ status: "failed", error: { code: "provider_balance_short" } });
    expect(t.ledger.available.get(tenant)).toBe(100_000n);
    expect(t.ledger.reserved(tenant)).toBe(0n);
  });

  it("voids an order refused with HTTP 400 `Insufficient funds`: provider_balance_short, the reason kept", async () => {
    tron.set({ itrx: { errors: "detail", balanceSun: 10 } });
    const { tenant, jobId } = await newLease();
    await step(jobId, "pending");
    expect(await step(jobId, "running")).toEqual({ kind: "done" });
    expect(await job(jobId)).toMatchObject({
      status: "failed",
      error: { code: "provider_balance_short", message: expect.stringContaining("HTTP 400: Insufficient funds") },
    });
    expect(t.ledger.reserved(tenant)).toBe(0n);
  });

  it("voids an order the provider ends without delegating", async () => {
    tron.set({ itrx: { endStatus: 43 } });
    const { tenant, jobId } = await newLease();
    await step(jobId, "pending");
    expect(await step(jobId, "running")).toEqual({ kind: "done" });
    expect(await job(jobId)).toMatchObject({ status: "failed", error: { code: "provider_order_failed" } });
    expect(t.ledger.available.get(tenant)).toBe(100_000n);
  });

  it("expires, refunded, when the order never delegates", async () => {
    tron.set({ itrx: { fulfilment: "never" } });
    const { tenant, jobId } = await newLease();
    await step(jobId, "pending");
    expect(await step(jobId, "running")).toEqual({ kind: "later", delayMs: 100 });
    await t.ctx.prisma.tronLease.update({ where: { jobId }, data: { verifyDeadline: new Date(Date.now() - 1) } });
    expect(await step(jobId, "running")).toEqual({ kind: "done" });
    expect(await job(jobId)).toMatchObject({ status: "expired", error: { code: "verification_timeout" } });
    expect(t.ledger.available.get(tenant)).toBe(100_000n);
    expect(t.ledger.reserved(tenant)).toBe(0n);
  });

  it("after a crash between ordering and recording the order, reconciles by the receiver and the time window: no second order, charged once", async () => {
    const { tenant, jobId, quote } = await newLease();
    await step(jobId, "pending");
    // The earlier run wrote its intent, ordered, then died before writing the serial down.
    await t.ctx.prisma.tronLease.update({ where: { jobId }, data: { orderIntentAt: new Date(), orderIntentBlock: BigInt(tron.height) } });
    const placed = tron.placeItrxOrder({ outTradeNo: jobId, receiver: RECEIVER, energy: 65_000, period: "1H" });
    expect(await step(jobId, "running")).toEqual({ kind: "done" });
    expect(posts(jobId)).toHaveLength(0);
    expect(orders(jobId)).toHaveLength(1);
    expect(await job(jobId)).toMatchObject({
      status: "succeeded",
      result: { provider_order_id: null, reconciled: true, verified_by: "delegation_transaction", delegation_txids: placed.txids },
    });
    expect(t.ledger.available.get(tenant)).toBe(100_000n - quote.costUnits);
    expect((await t.ctx.prisma.tronLease.findUniqueOrThrow({ where: { jobId } })).delegationTxids).toEqual(placed.txids);
  });

  it("never orders again after an attempt whose answer was lost and that placed nothing; another lease's delegation does not count; expires refunded at the window's end", async () => {
    // A lease to the same receiver, verified by its own transaction in the newest block.
    const first = await newLease();
    await step(first.jobId, "pending");
    expect(await step(first.jobId, "running")).toEqual({ kind: "done" });
    const { tenant, jobId } = await newLease();
    await step(jobId, "pending");
    await t.ctx.prisma.tronLease.update({ where: { jobId }, data: { orderIntentAt: new Date(), orderIntentBlock: BigInt(tron.height) } });
    expect(await step(jobId, "running")).toEqual({ kind: "later", delayMs: 100 });
    expect(await step(jobId, "running")).toEqual({ kind: "later", delayMs: 100 });
    expect(posts(jobId)).toHaveLength(0);
    await t.ctx.prisma.tronLease.update({ where: { jobId }, data: { orderIntentAt: new Date(Date.now() - 61_000) } });
    expect(await step(jobId, "running")).toEqual({ kind: "done" });
    expect(await job(jobId)).toMatchObject({
      status: "expired",
      error: { code: "provider_unreachable", message: expect.stringContaining("answer to the order was lost") },
    });
    expect(posts(jobId)).toHaveLength(0);
    expect(t.ledger.available.get(tenant)).toBe(100_000n);
    expect(t.ledger.reserved(tenant)).toBe(0n);
  });

  it("orders once when the answer is lost in flight, then finds the delegation on chain and charges once", async () => {
    tron.set({ itrx: { dropOrderAnswers: 1 } });
    const { tenant, jobId, quote } = await newLease();
    await step(jobId, "pending");
    expect(await step(jobId, "running")).toEqual({ kind: "later", delayMs: 100 });
    expect(await t.ctx.prisma.tronLease.findUniqueOrThrow({ where: { jobId } })).toMatchObject({ stage: "order", orderIntentAt: expect.any(Date) });
    expect(await step(jobId, "running")).toEqual({ kind: "done" });
    expect(posts(jobId)).toHaveLength(1);
    expect(orders(jobId)).toHaveLength(1);
    expect(await job(jobId)).toMatchObject({ status: "succeeded", result: { reconciled: true, delegation_txids: orders(jobId)[0]!.txids } });
    expect(t.ledger.available.get(tenant)).toBe(100_000n - quote.costUnits);
    // Nothing here ever asked itrx by out_trade_no.
    expect(tron.itrxRequests.filter((r) => r.query.includes("out_trade_no"))).toEqual([]);
  });

  it("reconciles, never expires unseen, an order that may have been placed even when the lease is already old", async () => {
    tron.set({ itrx: { dropOrderAnswers: 1 } });
    const { tenant, jobId, quote } = await newLease();
    await step(jobId, "pending");
    // Past TRON_VERIFY_TIMEOUT_SECONDS since creation (a provider long unreachable), then an answer lost.
    await t.ctx.prisma.job.update({ where: { id: jobId }, data: { createdAt: new Date(Date.now() - 61_000) } });
    expect(await step(jobId, "running")).toEqual({ kind: "later", delayMs: 100 });
    expect(await step(jobId, "running")).toEqual({ kind: "done" });
    expect(await job(jobId)).toMatchObject({ status: "succeeded", result: { reconciled: true } });
    expect(orders(jobId)).toHaveLength(1);
    expect(t.ledger.available.get(tenant)).toBe(100_000n - quote.costUnits);
  });

  it("retries a provider that certainly placed nothing (HTTP 503), ordering once", async () => {
    tron.set({ itrx: { httpStatus: 503 } });
    const { jobId } = await newLease();
    await step(jobId, "pending");
    expect(await step(jobId, "running")).toEqual({ kind: "later", delayMs: 100 });
    expect(await t.ctx.prisma.tronLease.findUniqueOrThrow({ where: { jobId } })).toMatchObject({ orderIntentAt: null });
    tron.set({ itrx: {} });
    expect(await step(jobId, "running")).toEqual({ kind: "done" });
    expect(orders(jobId)).toHaveLength(1);
    expect((await job(jobId)).status).toBe("succeeded");
  });
});
