import { createHmac } from "node:crypto";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  MOCK_ITRX_API_KEY,
  MOCK_ITRX_API_SECRET,
  startCallbackReceiver,
  startStack,
  startTronMock,
  type CallbackReceiver,
  type Stack,
  type TronMock,
} from "@gateway/testkit";
import { balance, eventually, ledgerInvariant, leaseCustomer, quote, quoteAndLease, randomSecret, RECEIVERS, waitJob } from "./support/tron.js";

// Live mode with TRON_PROVIDER=itrx against the testkit's mock of itrx.io's documented API (as the English
// page describes it: the order query takes `serial` only) and the TRON node mock.
let stack: Stack;
let tron: TronMock;
let receiver: CallbackReceiver;
const COST = 2_700; // 65 000 energy for an hour at the default price

beforeAll(async () => {
  tron = await startTronMock();
  receiver = await startCallbackReceiver();
  stack = await startStack({
    services: ["ledger", "jobs"],
    env: {
      jobs: {
        TRON_MODE: "live",
        TRON_PROVIDER: "itrx",
        TRON_PROVIDER_URL: tron.itrxUrl,
        TRON_PROVIDER_API_KEY: MOCK_ITRX_API_KEY,
        TRON_PROVIDER_API_SECRET: MOCK_ITRX_API_SECRET,
        TRON_NODE_URL: tron.nodeUrl,
        TRON_HTTP_TIMEOUT_MS: "1000",
        TRON_PROVIDER_MINIMUM_TTL_SECONDS: "1",
        TRON_VERIFY_POLL_MS: "100",
        TRON_VERIFY_TIMEOUT_SECONDS: "3",
        CALLBACK_ALLOW_HTTP_LOOPBACK: "true",
        CALLBACK_BASE_DELAY_MS: "40",
        CALLBACK_POLL_MS: "50",
      },
    },
  });
});

afterAll(async () => {
  await stack?.shutdown();
  await tron?.close();
  await receiver?.close();
});

beforeEach(() => tron.set({ itrx: {} }));

const ordersOf = (jobId: string) => [...tron.itrxOrders.values()].filter((o) => o.outTradeNo === jobId);

describe("energy leases through itrx (TRON_PROVIDER=itrx)", () => {
  it("quotes the covering period, orders once (signed), verifies the delegation transaction, captures once and calls back signed", async () => {
    const c = await leaseCustomer(stack, 10_000);
    const secret = randomSecret();
    const { quote, lease } = await quoteAndLease(stack, c, { callback_url: receiver.url, callback_secret: secret });
    expect(quote).toMatchObject({ cost_units: COST, provider: "itrx", provider_period: { name: "1H", seconds: 3_600 } });
    expect(lease.status).toBe(202);
    const jobId = lease.body.data.job_id;
    const job = await waitJob(stack, c, jobId, (j) => j.status === "succeeded" && j.callback.state === "delivered");
    const [order] = ordersOf(jobId);
    expect(ordersOf(jobId)).toHaveLength(1);
    expect(order).toMatchObject({ receiver: RECEIVERS[0], energy: 65_000, period: "1H", status: 40 });
    expect(tron.itrxRequests.filter((r) => r.method === "POST" && (r.body as { out_trade_no?: string }).out_trade_no === jobId)).toEqual([
      expect.objectContaining({ signed: true }),
    ]);
    expect(job.result).toMatchObject({
      provider: "itrx",
      provider_order_id: order!.serial,
      verified_by: "delegation_transaction",
      delegation_txids: order!.txids,
      cost_units: String(COST),
    });
    expect(await balance(stack, c)).toMatchObject({ available_units: 10_000 - COST, reserved_units: 0 });
    // Signed job.updated callbacks: running, then succeeded.
    const mine = await eventually(
      "two callbacks",
      async () => receiver.received.filter((r) => JSON.parse(r.body).job.id === jobId),
      (r) => r.length >= 2,
    );
    expect(mine.map((r) => JSON.parse(r.body).job.status)).toEqual(["running", "succeeded"]);
    for (const r of mine) expect(r.headers["x-service-signature"]).toBe(`sha256=${createHmac("sha256", secret).update(r.body).digest("hex")}`);
    // The provider's credentials are in no log line.
    for (const service of ["edge", "ledger", "jobs"] as const) {
      const logs = JSON.stringify(stack.logs(service));
      expect(logs).not.toContain(MOCK_ITRX_API_KEY);
      expect(logs).not.toContain(MOCK_ITRX_API_SECRET);
    }
  });

  it.each(["errno", "detail"] as const)("voids a refused order: the provider's balance is short (its own error code, %s answer)", async (errors) => {
    tron.set({ itrx: { balanceSun: 1_000, errors } });
    const c = await leaseCustomer(stack, 10_000);
    const { lease } = await quoteAndLease(stack, c);
    const job = await waitJob(stack, c, lease.body.data.job_id, (j) => j.status === "failed");
    expect(job.error).toMatchObject({ code: "provider_balance_short" });
    if (errors === "detail") expect(job.error.message).toContain("Insufficient funds");
    expect(await balance(stack, c)).toMatchObject({ available_units: 10_000, reserved_units: 0 });
    const alert = stack.logs("jobs").find((l) => JSON.stringify(l).includes("operator action needed") && JSON.stringify(l).includes(lease.body.data.job_id));
    expect(alert).toBeDefined();
  });

  it("refuses at the quote (400) an energy below itrx's reported minimum order, holding nothing", async () => {
    tron.set({ itrx: { minimumOrderEnergy: 70_000 } });
    // The minimum is cached TRON_PROVIDER_MINIMUM_TTL_SECONDS (1 s here).
    await new Promise((r) => setTimeout(r, 1_100));
    const c = await leaseCustomer(stack, 10_000);
    const refused = await quote(stack, c, { energy: 65_000 });
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ error: "invalid_request", message: expect.stringContaining("at least 70000") });
    expect((await quote(stack, c, { energy: 70_000 })).status).toBe(200);
    expect(await balance(stack, c)).toMatchObject({ available_units: 10_000, reserved_units: 0 });
    tron.set({ itrx: {} });
    await new Promise((r) => setTimeout(r, 1_100));
  });

  it("expires, refunded, when the order is never delegated", async () => {
    tron.set({ itrx: { fulfilment: "never" } });
    const c = await leaseCustomer(stack, 10_000);
    const { lease } = await quoteAndLease(stack, c);
    const job = await waitJob(stack, c, lease.body.data.job_id, (j) => j.status === "expired", 30_000);
    expect(job.error).toMatchObject({ code: "verification_timeout" });
    expect(await balance(stack, c)).toMatchObject({ available_units: 10_000, reserved_units: 0 });
    expect(ordersOf(lease.body.data.job_id)).toHaveLength(1);
  });

  it("orders once when the answer is lost, reconciles it by the receiver and the time window (never by out_trade_no), and charges once", async () => {
    tron.set({ itrx: { dropOrderAnswers: 1 } });
    const c = await leaseCustomer(stack, 10_000);
    const { lease } = await quoteAndLease(stack, c);
    const jobId = lease.body.data.job_id;
    const job = await waitJob(stack, c, jobId, (j) => j.status === "succeeded");
    expect(ordersOf(jobId)).toHaveLength(1);
    expect(job.result).toMatchObject({ provider_order_id: null, reconciled: true, delegation_txids: ordersOf(jobId)[0]!.txids });
    expect(tron.itrxRequests.filter((r) => r.method === "POST" && (r.body as { out_trade_no?: string }).out_trade_no === jobId)).toHaveLength(1);
    expect(tron.itrxRequests.filter((r) => r.query.includes("out_trade_no"))).toEqual([]);
    expect(await balance(stack, c)).toMatchObject({ available_units: 10_000 - COST, reserved_units: 0 });
  });

  it("runs a lease against the Chinese page's API too (the query also takes out_trade_no): nothing depends on it", async () => {
    tron.set({ itrx: { orderQuery: "serial_or_out_trade_no" } });
    const c = await leaseCustomer(stack, 10_000);
    const { lease } = await quoteAndLease(stack, c);
    const job = await waitJob(stack, c, lease.body.data.job_id, (j) => j.status === "succeeded");
    expect(job.result).toMatchObject({ provider_order_id: ordersOf(lease.body.data.job_id)[0]!.serial, verified_by: "delegation_transaction" });
  });

  it("keeps the ledger invariant after all of the above", async () => {
    const res = await ledgerInvariant(stack);
    expect(res.ok, JSON.stringify(res.detail)).toBe(true);
  });
});
