import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  MOCK_DELEGATOR,
  MOCK_ITRX_API_KEY,
  MOCK_ITRX_API_SECRET,
  MOCK_ITRX_DELEGATOR,
  MOCK_TOTAL_ENERGY_LIMIT,
  MOCK_TOTAL_ENERGY_WEIGHT,
  startTronMock,
  type MockTransaction,
  type TronMock,
} from "@gateway/testkit";
import { ItrxEnergyProvider } from "./itrx.js";
import { HttpTronNode } from "./node.js";

const RECEIVER = "TLyqzVGLV1srkB7dToTAEqgDSfPtXRJZYH";
const OTHER = "TNQDRWktv1qrLnDT5ZL5ThHZJgGspaEHgM";
let tron: TronMock;
let node: HttpTronNode;

beforeAll(async () => {
  tron = await startTronMock();
  node = new HttpTronNode({ baseUrl: tron.nodeUrl, timeoutMs: 1_000 });
});
afterAll(async () => tron?.close());

/** Sun that the mock network turns into exactly `energy` (or a hair more). */
const sunFor = (energy: number) => Math.ceil((energy * MOCK_TOTAL_ENERGY_WEIGHT * 1_000_000) / MOCK_TOTAL_ENERGY_LIMIT);
let k = 0;
function tx(over: Partial<MockTransaction> = {}): string {
  const txid = createHash("sha256").update(`node-test-${++k}`).digest("hex");
  tron.transactions.set(txid, {
    txid,
    type: "DelegateResourceContract",
    owner: MOCK_ITRX_DELEGATOR,
    receiver: RECEIVER,
    balanceSun: sunFor(65_000),
    resource: "ENERGY",
    contractRet: "SUCCESS",
    inBlock: true,
    ...over,
  });
  return txid;
}

describe("HttpTronNode.delegationsTo (the reconciliation's window)", () => {
  it("finds the energy delegations to the receiver in the blocks from the one given to the head, page by page", async () => {
    const from = tron.mine(1);
    const inWindow = tx({ block: from + 5 });
    const late = tx({ block: from + 150 });
    const before = tx({ block: from - 1 });
    tx({ block: from + 6, receiver: OTHER });
    tx({ block: from + 7, resource: "BANDWIDTH" });
    tx({ block: from + 8, type: "TransferContract" });
    tron.mine(200);
    const head = await node.head();
    expect(head).toEqual({ kind: "head", block: tron.height });
    const pages = tron.nodePaths.length;
    const scan = await node.delegationsTo(RECEIVER, from);
    expect(scan).toEqual({ kind: "scanned", txids: [inWindow, late], head: tron.height });
    expect(scan).not.toMatchObject({ txids: expect.arrayContaining([before]) });
    // 201 blocks: three pages of at most 100.
    expect(tron.nodePaths.slice(pages).filter((p) => p === "/wallet/getblockbylimitnext")).toHaveLength(3);
  });

  it("answers unreachable, never throws, when the node is down", async () => {
    const down = new HttpTronNode({ baseUrl: "http://127.0.0.1:9", timeoutMs: 500 });
    expect(await down.head()).toMatchObject({ kind: "unreachable" });
    expect(await down.delegationsTo(RECEIVER, 1)).toMatchObject({ kind: "unreachable" });
  });
});

describe("HttpTronNode.delegatedByTransactions", () => {
  it("counts exactly the reported transactions that are successful energy delegations to the receiver", async () => {
    const good = tx();
    const check = await node.delegatedByTransactions([good, good], RECEIVER);
    expect(check).toMatchObject({ kind: "energy", confirmed: [good], rejected: [] });
    expect((check as { energy: number }).energy).toBeGreaterThanOrEqual(65_000);
    expect((check as { energy: number }).energy).toBeLessThan(65_010);
  });

  it("rejects each way a transaction can fail to be the lease's delegation", async () => {
    const cases: [string, string][] = [
      [tx({ receiver: OTHER }), "another receiver"],
      [tx({ resource: "BANDWIDTH" }), "not ENERGY"],
      [tx({ type: "TransferContract" }), "not a DelegateResourceContract"],
      [tx({ contractRet: "REVERT" }), "contract result REVERT"],
      [tx({ inBlock: false }), "not in an irreversible block yet"],
      // In a block the latest state shows, which a fork can still undo: not yet.
      [tx({ solid: false }), "not in an irreversible block yet"],
      [tx({ failed: true }), "failed on chain"],
      ["ab".repeat(32), "not found on chain"],
    ];
    const check = await node.delegatedByTransactions(
      cases.map(([t]) => t),
      RECEIVER,
    );
    expect(check).toMatchObject({ kind: "energy", energy: 0, confirmed: [] });
    const rejected = (check as { rejected: { txid: string; reason: string }[] }).rejected;
    cases.forEach(([t, why], i) => {
      expect(rejected[i]).toEqual({ txid: t, reason: expect.stringContaining(why) });
    });
  });

  it("tells two leases to the same receiver apart, which the delegator's sum cannot", async () => {
    const itrx = new ItrxEnergyProvider({ baseUrl: tron.itrxUrl, apiKey: MOCK_ITRX_API_KEY, apiSecret: MOCK_ITRX_API_SECRET, timeoutMs: 1_000 });
    const receiver = "TETk6ZoJe5fGYUkrJbXYSsacympnK4fbbd";
    tron.set({ itrx: {} });
    const first = (await itrx.order({ clientOrderId: "job_first", receiver, energy: 65_000, durationSeconds: 3_600 })) as { orderId: string };
    const firstTx = await itrx.fulfilment({ orderId: first.orderId, clientOrderId: "job_first" });
    tron.set({ itrx: { fulfilment: "never" } });
    const second = (await itrx.order({ clientOrderId: "job_second", receiver, energy: 65_000, durationSeconds: 3_600 })) as { orderId: string };
    const secondTx = await itrx.fulfilment({ orderId: second.orderId, clientOrderId: "job_second" });
    expect(secondTx).toEqual({ kind: "progress", txids: [] });
    // The sum shows the first lease's energy to the second lease too...
    expect(await node.delegatedEnergy(MOCK_ITRX_DELEGATOR, receiver)).toMatchObject({ kind: "energy", energy: expect.any(Number) });
    expect(((await node.delegatedEnergy(MOCK_ITRX_DELEGATOR, receiver)) as { energy: number }).energy).toBeGreaterThanOrEqual(65_000);
    // ...the first lease's own transaction verifies the first lease only.
    const check = await node.delegatedByTransactions((firstTx as { txids: string[] }).txids, receiver);
    expect((check as { energy: number }).energy).toBeGreaterThanOrEqual(65_000);
    tron.set({ itrx: {} });
  });

  it("confirms on the solidity API (walletsolidity/), at its own URL when given, never on the latest block", async () => {
    const pending = tx({ solid: false });
    expect(await node.delegatedByTransactions([pending], RECEIVER)).toMatchObject({ energy: 0, confirmed: [] });
    tron.transactions.get(pending)!.solid = true;
    expect(await node.delegatedByTransactions([pending], RECEIVER)).toMatchObject({ confirmed: [pending] });
    const infos = tron.nodePaths.filter((p) => p.endsWith("/gettransactioninfobyid"));
    expect(infos.length).toBeGreaterThan(0);
    expect(infos.every((p) => p === "/walletsolidity/gettransactioninfobyid")).toBe(true);
    // The delegated sum (the generic provider's fallback) reads irreversible state too.
    const before = tron.nodePaths.length;
    await node.delegatedEnergy(MOCK_ITRX_DELEGATOR, RECEIVER);
    expect(tron.nodePaths.slice(before)).toContain("/walletsolidity/getdelegatedresourcev2");
    // A separate solidity URL (java-tron's own port): a dead one makes the check unreachable.
    const split = new HttpTronNode({ baseUrl: tron.nodeUrl, solidityUrl: "http://127.0.0.1:9", timeoutMs: 500 });
    expect(await split.delegatedByTransactions([pending], RECEIVER)).toMatchObject({ kind: "unreachable" });
  });

  it("counts a split order's transactions together", async () => {
    const a = tx({ balanceSun: sunFor(40_000) });
    const b = tx({ balanceSun: sunFor(25_000) });
    const check = await node.delegatedByTransactions([a, b], RECEIVER);
    expect(check).toMatchObject({ confirmed: [a, b] });
    expect((check as { energy: number }).energy).toBeGreaterThanOrEqual(65_000);
  });

  it("answers unreachable, never throws, when the node is down", async () => {
    const down = new HttpTronNode({ baseUrl: "http://127.0.0.1:9", timeoutMs: 500 });
    expect(await down.delegatedByTransactions([tx()], RECEIVER)).toMatchObject({ kind: "unreachable" });
  });
});

describe("HttpTronNode.delegatedEnergy (the delegator's sum)", () => {
  it("reads one entry for the delegator and receiver, however many leases made it up, as a node answers", async () => {
    // A receiver of its own, and 40 leases to it from the generic provider's delegator.
    const receiver = "TETk6ZoJe5fGYUkrJbXYSsacympnK4fbbd";
    for (let i = 0; i < 40; i++) {
      const res = await fetch(`${tron.providerUrl}/orders`, {
        method: "POST",
        headers: { "content-type": "application/json", "idempotency-key": `job_sum_${i}` },
        body: JSON.stringify({ receiver, energy: 65_000, duration_seconds: 3_600 }),
      });
      expect(res.status).toBe(201);
    }
    const raw = (await (
      await fetch(`${tron.nodeUrl}/walletsolidity/getdelegatedresourcev2`, {
        method: "POST",
        body: JSON.stringify({ fromAddress: MOCK_DELEGATOR, toAddress: receiver, visible: true }),
      })
    ).json()) as { delegatedResource: { frozen_balance_for_energy: number }[] };
    // One entry per delegation made the answer, and the soak's process and jobs with it,
    // grow with every lease (387 KB after 7,000; docs/decisions/0236).
    expect(raw.delegatedResource).toHaveLength(1);
    expect(raw.delegatedResource[0]!.frozen_balance_for_energy).toBe(40 * sunFor(65_000));
    const check = await node.delegatedEnergy(MOCK_DELEGATOR, receiver);
    expect(check.kind).toBe("energy");
    const energy = check.kind === "energy" ? check.energy : 0;
    expect(energy).toBeGreaterThanOrEqual(40 * 65_000);
    expect(energy).toBeLessThan(40 * 65_000 + 40);
  });
});
