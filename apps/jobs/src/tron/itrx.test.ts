import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { MOCK_ITRX_API_KEY, MOCK_ITRX_API_SECRET, startTronMock, type TronMock } from "@gateway/testkit";
import { canonicalJson, ItrxEnergyProvider, itrxPeriod, itrxReason, itrxSignature } from "./itrx.js";

const RECEIVER = "TNQDRWktv1qrLnDT5ZL5ThHZJgGspaEHgM";
let tron: TronMock;
let n = 0;

beforeAll(async () => {
  tron = await startTronMock();
});
afterAll(async () => tron?.close());
beforeEach(() => tron.set({ itrx: {} }));

const provider = (over: Partial<ConstructorParameters<typeof ItrxEnergyProvider>[0]> = {}) =>
  new ItrxEnergyProvider({ baseUrl: tron.itrxUrl, apiKey: MOCK_ITRX_API_KEY, apiSecret: MOCK_ITRX_API_SECRET, timeoutMs: 1_000, ...over });
const request = (over: Partial<{ energy: number; durationSeconds: number }> = {}) => ({
  clientOrderId: `job_itrx_${++n}`,
  receiver: RECEIVER,
  energy: 65_000,
  durationSeconds: 3_600,
  ...over,
});
const posts = (outTradeNo: string) =>
  tron.itrxRequests.filter((r) => r.method === "POST" && (r.body as { out_trade_no?: string })?.out_trade_no === outTradeNo);

describe("itrx periods", () => {
  it("orders the smallest period that covers the lease", () => {
    expect(itrxPeriod(300)).toEqual({ name: "1H", seconds: 3_600 });
    expect(itrxPeriod(3_600)).toEqual({ name: "1H", seconds: 3_600 });
    expect(itrxPeriod(3_601)).toEqual({ name: "1D", seconds: 86_400 });
    expect(itrxPeriod(86_400)).toEqual({ name: "1D", seconds: 86_400 });
    expect(itrxPeriod(86_401)).toEqual({ name: "2D", seconds: 172_800 });
    expect(itrxPeriod(30 * 86_400 + 1)).toBeNull();
  });
});

describe("itrx signature", () => {
  it("reproduces the documentation's worked example", () => {
    const body = canonicalJson({
      receive_address: "TExWKszFWYTKZH8LYiovAPKzS3L9MLZ4kw",
      period: "1D",
      out_trade_no: "123456",
      energy_amount: 32000,
      callback_url: "http://{mydomain}/callback",
    });
    expect(body).toBe(
      '{"callback_url":"http://{mydomain}/callback","energy_amount":32000,"out_trade_no":"123456","period":"1D","receive_address":"TExWKszFWYTKZH8LYiovAPKzS3L9MLZ4kw"}',
    );
    expect(itrxSignature("0285A2741D0E76E2E187260EB23E51851D48403A756333E7D0CF845406ABF3E8", "1686796826", body)).toBe(
      "07c125cabfe006614a02131f927cca9e7a654f7644a817b155fad591e1c50f7b",
    );
  });
});

describe("ItrxEnergyProvider against the documented API (mock)", () => {
  it("orders once, signed, with out_trade_no = the job id and the covering period, and reports the delegation transaction", async () => {
    const p = provider();
    const r = request({ durationSeconds: 7_200 });
    const ordered = await p.order(r);
    expect(ordered).toMatchObject({ kind: "ordered", orderId: expect.stringMatching(/^[0-9a-f]{32}$/) });
    const [post] = posts(r.clientOrderId);
    expect(post).toMatchObject({ signed: true, body: { energy_amount: 65_000, period: "1D", receive_address: RECEIVER, out_trade_no: r.clientOrderId } });
    const orderId = (ordered as { orderId: string }).orderId;
    const f = await p.fulfilment({ orderId, clientOrderId: r.clientOrderId });
    expect(f).toEqual({ kind: "progress", txids: tron.itrxOrders.get(orderId)!.txids });
    expect(tron.itrxOrders.get(orderId)!.txids).toHaveLength(1);
  });

  it("never asks by out_trade_no (the English page's query takes `serial` only): one POST, no query, per order", async () => {
    const p = provider();
    const r = request();
    const before = tron.itrxRequests.length;
    expect(await p.order(r)).toMatchObject({ kind: "ordered" });
    expect(tron.itrxRequests.slice(before)).toEqual([expect.objectContaining({ method: "POST", path: "/api/v1/frontend/order" })]);
    // The mock is the English page: a query without `serial` is HTTP 400 naming the field.
    const res = await fetch(`${tron.itrxUrl}/api/v1/frontend/order/query?out_trade_no=${r.clientOrderId}`, { headers: { "api-key": MOCK_ITRX_API_KEY } });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ serial: ["This field is required."] });
  });

  it("says when an unanswered order certainly placed nothing (no connection, 429, 503), and when it may have", async () => {
    const closed = await new Promise<number>((resolve) => {
      const s = createServer();
      s.listen(0, "127.0.0.1", () => {
        const { port } = s.address() as AddressInfo;
        s.close(() => resolve(port));
      });
    });
    expect(await provider({ baseUrl: `http://127.0.0.1:${closed}` }).order(request())).toEqual({
      kind: "unreachable",
      reason: "connection failed",
      notPlaced: true,
    });
    for (const httpStatus of [429, 503]) {
      tron.set({ itrx: { httpStatus } });
      expect(await provider().order(request())).toEqual({ kind: "unreachable", reason: `HTTP ${httpStatus}`, notPlaced: true });
    }
    tron.set({ itrx: { httpStatus: 502 } });
    expect(await provider().order(request())).toEqual({ kind: "unreachable", reason: "HTTP 502" });
    // Placed, then the connection cut: the order exists, the client cannot know it.
    tron.set({ itrx: { dropOrderAnswers: 1 } });
    const r = request();
    expect(await provider().order(r)).toEqual({ kind: "unreachable", reason: "connection failed" });
    expect([...tron.itrxOrders.values()].filter((o) => o.outTradeNo === r.clientOrderId)).toHaveLength(1);
  });

  it("is refused with its own codes: a short balance, bad credentials, an ordinary refusal", async () => {
    tron.set({ itrx: { balanceSun: 1_000 } });
    expect(await provider().order(request())).toMatchObject({ kind: "refused", code: "provider_balance_short" });
    tron.set({ itrx: {} });
    expect(await provider({ apiSecret: "wrong" }).order(request())).toMatchObject({ kind: "refused", code: "provider_auth_failed" });
    expect(tron.itrxRequests.at(-1)).toMatchObject({ method: "POST", signed: false });
    expect(await provider({ apiKey: "wrong" }).order(request())).toMatchObject({ kind: "refused", code: "provider_auth_failed" });
    expect(await provider().order(request({ energy: 1_000 }))).toMatchObject({
      kind: "refused",
      code: "provider_refused",
      reason: expect.stringContaining("minimum"),
    });
    tron.set({ itrx: { refuse: { errno: 4002, message: "no energy available" } } });
    expect(await provider().order(request())).toEqual({ kind: "refused", code: "provider_refused", reason: "errno 4002: no energy available" });
  });

  it("reads HTTP 400 bodies: a short balance (`detail`) is the operator's, with the reason kept; other details and per-field arrays are refusals", async () => {
    tron.set({ itrx: { errors: "detail", balanceSun: 1_000 } });
    expect(await provider().order(request())).toEqual({ kind: "refused", code: "provider_balance_short", reason: "HTTP 400: Insufficient funds" });
    tron.set({ itrx: { errors: "detail" } });
    expect(await provider().order(request({ energy: 20_000 }))).toEqual({
      kind: "refused",
      code: "provider_refused",
      reason: "HTTP 400: energy_amount: Ensure this value is greater than or equal to 32000.",
    });
    tron.set({ itrx: { errors: "detail", refuse: { errno: 0, message: "API not found" } } });
    expect(await provider().order(request())).toEqual({ kind: "refused", code: "provider_refused", reason: "HTTP 400: API not found" });
    expect(await provider({ baseUrl: `${tron.itrxUrl}/nowhere` }).order(request())).toMatchObject({ kind: "refused", code: "provider_refused" });
  });

  it("takes a reason from every error shape, never the whole body", () => {
    expect(itrxReason({ detail: "Insufficient funds" })).toBe("Insufficient funds");
    expect(itrxReason({ errno: 4001, message: "余额不足" })).toBe("余额不足");
    expect(itrxReason({ serial: ["This field is required."], period: ["a", "b"] })).toBe("serial: This field is required.; period: a b");
    expect(itrxReason({ detail: "x".repeat(500) })).toHaveLength(200);
    expect(itrxReason({ errno: 1, other: { nested: true } })).toBeUndefined();
    expect(itrxReason(undefined)).toBeUndefined();
  });

  it("reads the minimum order from index-data, once per TTL; keeps the last value when itrx cannot be asked", async () => {
    let now = 1_000_000;
    const p = provider({ now: () => now, minimumTtlMs: 60_000 });
    const asked = () => tron.itrxRequests.filter((r) => r.path === "/api/v1/frontend/index-data").length;
    const before = asked();
    tron.set({ itrx: { minimumOrderEnergy: 20_000 } });
    expect(await Promise.all([p.minimumEnergy(), p.minimumEnergy()])).toEqual([20_000, 20_000]);
    expect(await p.minimumEnergy()).toBe(20_000);
    expect(asked() - before).toBe(1);
    tron.set({ itrx: { minimumOrderEnergy: 32_000 } });
    now += 60_001;
    expect(await p.minimumEnergy()).toBe(32_000);
    expect(asked() - before).toBe(2);
    tron.set({ itrx: { httpStatus: 503 } });
    now += 60_001;
    expect(await p.minimumEnergy()).toBe(32_000);
    // A wrong key: index-data answers empty data, as documented; never asked, nothing known.
    tron.set({ itrx: {} });
    expect(await provider({ apiKey: "wrong" }).minimumEnergy()).toBeNull();
    expect(await provider({ baseUrl: "http://127.0.0.1:9" }).minimumEnergy()).toBeNull();
  });

  it("retries (unreachable) on an outage, a timeout and a closed port", async () => {
    tron.set({ itrx: { httpStatus: 502 } });
    expect(await provider().order(request())).toEqual({ kind: "unreachable", reason: "HTTP 502" });
    tron.set({ itrx: { delayMs: 300 } });
    expect(await provider({ timeoutMs: 100 }).order(request())).toEqual({ kind: "unreachable", reason: "timeout" });
    expect(await provider({ baseUrl: "http://127.0.0.1:9" }).order(request())).toMatchObject({ kind: "unreachable", reason: "connection failed" });
  });

  it("reports progress until the slow order delegates, and failure when the provider ends it", async () => {
    tron.set({ itrx: { fulfilment: { afterQueries: 2 } } });
    const p = provider();
    const r = request();
    const { orderId } = (await p.order(r)) as { orderId: string };
    expect(await p.fulfilment({ orderId, clientOrderId: r.clientOrderId })).toEqual({ kind: "progress", txids: [] });
    expect(await p.fulfilment({ orderId, clientOrderId: r.clientOrderId })).toEqual({ kind: "progress", txids: [] });
    expect((await p.fulfilment({ orderId, clientOrderId: r.clientOrderId })) as { txids: string[] }).toMatchObject({
      kind: "progress",
      txids: [expect.stringMatching(/^[0-9a-f]{64}$/)],
    });
    tron.set({ itrx: { endStatus: 41 } });
    const r2 = request();
    const second = (await p.order(r2)) as { orderId: string };
    expect(await p.fulfilment({ orderId: second.orderId, clientOrderId: r2.clientOrderId })).toMatchObject({
      kind: "failed",
      code: "provider_order_failed",
      reason: expect.stringContaining("status 41"),
    });
    expect(await p.fulfilment({ orderId: "0".repeat(32), clientOrderId: "x" })).toMatchObject({ kind: "failed", code: "provider_order_failed" });
  });

  it("never puts the API key or secret in a reason", async () => {
    const reasons: string[] = [];
    tron.set({ itrx: { balanceSun: 1 } });
    reasons.push(JSON.stringify(await provider().order(request())));
    tron.set({ itrx: {} });
    reasons.push(JSON.stringify(await provider({ apiSecret: "wrong" }).order(request())));
    for (const r of reasons) {
      expect(r).not.toContain(MOCK_ITRX_API_KEY);
      expect(r).not.toContain(MOCK_ITRX_API_SECRET);
    }
  });
});
