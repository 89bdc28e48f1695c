import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient, type Client } from "@gateway/grpc-kit";
import { createLogger } from "@gateway/logger";
import { ledgerV1 } from "@gateway/protos";
import { startLedger, type LedgerService } from "@gateway/testkit";
import { LedgerCalls } from "./ledger-calls.js";
import { HoldProtocol, type HoldSpec } from "./protocol.js";
import type { Reclaimed } from "./reclaim.js";

/** The hold protocol against the real ledger (a process of its own, on a fresh database). */
let service: LedgerService;
let client: Client<typeof ledgerV1>;
let calls: LedgerCalls;
beforeAll(async () => {
  service = await startLedger();
  client = createClient(ledgerV1, service.address, { deadlineMs: 10_000, serviceToken: service.serviceToken, tls: service.tls });
  calls = new LedgerCalls(client, createLogger({ service: "protocol-test", level: "silent" }));
}, 120_000);
afterAll(async () => {
  client?.close();
  await service?.close();
});

const run = randomBytes(3).toString("hex");
let n = 0;
async function tenant(units: bigint): Promise<string> {
  const id = `ten_proto_${run}_${++n}`;
  await client.Credit({ operation_id: `credit:${id}`, tenant_id: id, units: units.toString(), reason: "test" });
  return id;
}
const spec = (tenantId: string, units: bigint, id = `rec_${run}_${++n}`): HoldSpec => ({
  id,
  tenantId,
  units,
  expiry: { ttlSeconds: 3_600 },
  reason: `test record ${id}`,
});
const balance = async (tenantId: string) => {
  const b = await client.GetBalance({ tenant_id: tenantId });
  return { available: BigInt(b.available_units), reserved: BigInt(b.reserved_units) };
};

describe("the hold protocol", () => {
  it("opens, captures, and answers a second capture or a void with what the ledger holds", async () => {
    const t = await tenant(1_000n);
    const holds = new HoldProtocol(calls);
    const s = spec(t, 300n);
    const opened = await holds.open(s);
    expect(await balance(t)).toEqual({ available: 700n, reserved: 300n });
    expect(await holds.capture(s.id, opened.hold_id, 120n, "charged")).toMatchObject({ kind: "settled" });
    // A replay with other units, or a void after it, conflicts and says how the hold ended.
    const again = await holds.capture(s.id, opened.hold_id, 200n, "charged");
    expect(again).toMatchObject({ kind: "conflict", hold: { status: "captured", captured_units: "120" } });
    expect(await holds.void(s.id, opened.hold_id, "nothing owed")).toMatchObject({ kind: "conflict", hold: { status: "captured" } });
    expect(await balance(t)).toEqual({ available: 880n, reserved: 0n });
  });

  it("recovers a hold whose id was lost: replayed to find it, then settled as the owner's rule says, once", async () => {
    const t = await tenant(1_000n);
    const holds = new HoldProtocol(calls);
    const s = spec(t, 300n);
    await holds.open(s);
    const rule = () => ({ kind: "capture" as const, units: 50n, reason: "known charge" });
    // Two recoveries at once (two replicas): one capture.
    const [a, b] = await Promise.all([holds.recover(s, null, rule), holds.recover(s, null, rule)]);
    for (const r of [a, b]) expect(r).toMatchObject({ kind: "captured", capturedUnits: 50n });
    expect(await balance(t)).toEqual({ available: 950n, reserved: 0n });
    // The state of a settled hold decides without asking the rule.
    expect(await holds.recover(s, null, () => ({ kind: "void", reason: "x" }))).toMatchObject({ kind: "captured", capturedUnits: 50n });
  });

  it("a reservation that never reached the ledger is found never reserved: a replay that takes it gives it back", async () => {
    const t = await tenant(1_000n);
    const holds = new HoldProtocol(calls);
    const s = spec(t, 300n);
    expect(await holds.recover(s, null, () => ({ kind: "wait" }))).toEqual({ kind: "none" });
    expect(await balance(t)).toEqual({ available: 1_000n, reserved: 0n });
    // A replay refused (no money for it) also means never reserved.
    const poor = await tenant(10n);
    expect(await holds.recover(spec(poor, 300n), null, () => ({ kind: "wait" }))).toEqual({ kind: "none" });
  });

  it("waits when the rule says so, and voids when it says so", async () => {
    const t = await tenant(1_000n);
    const holds = new HoldProtocol(calls);
    const s = spec(t, 300n);
    const opened = await holds.open(s);
    expect(await holds.recover(s, opened.hold_id, () => ({ kind: "wait" }))).toEqual({ kind: "open", holdId: opened.hold_id });
    expect(await holds.recover(s, opened.hold_id, () => ({ kind: "void", reason: "provider failed" }))).toMatchObject({ kind: "voided", releasedUnits: 300n });
    expect(await balance(t)).toEqual({ available: 1_000n, reserved: 0n });
  });

  it("opens on everything the tenant has: refused, the owner's allotments are reclaimed and the ledger asked again", async () => {
    const t = await tenant(1_000n);
    // Funds set aside elsewhere (an allotment) that a reclaim gives back.
    const aside = await calls.reserve({ operation_id: `allot:${t}`, tenant_id: t, units: "800", ttl_seconds: 3_600, reason: "aside", allotment: true });
    let reclaims = 0;
    const holds = new HoldProtocol(calls, async (tenantId): Promise<Reclaimed> => {
      reclaims++;
      expect(tenantId).toBe(t);
      await calls.void({ operation_id: `close:${t}`, hold_id: aside.hold_id, reason: "given back" });
      return "given";
    });
    const opened = await holds.open(spec(t, 900n));
    expect(opened.hold_id).toMatch(/^hold_/);
    expect(reclaims).toBe(1);
    await expect(holds.open(spec(t, 900n))).rejects.toMatchObject({ code: "insufficient_balance" });
  });
});
