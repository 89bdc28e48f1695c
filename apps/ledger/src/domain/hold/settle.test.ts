import { describe, expect, it } from "vitest";
import { ledgerPerFile } from "../../testing/ledger-per-file.js";
import { movedFields } from "../../testing/test-moves.js";
import { getBalance } from "../balance/get.js";
import { createCredit } from "../credit/create.js";
import { captureHold, type CaptureHoldInput } from "./capture.js";
import { getHold } from "./get.js";
import { reserveHold } from "./reserve.js";
import { voidHold, type VoidHoldInput } from "./void.js";

const ledger = ledgerPerFile();

let n = 0;
async function holdFor(tenant: string, funds: number, units: number, ttlSeconds = 900) {
  if (funds > 0) await createCredit({ ctx: ledger.ctx, input: { operation_id: `fund-${++n}`, tenant_id: tenant, units: String(funds), reason: "funds" } });
  return reserveHold({ ctx: ledger.ctx, input: { operation_id: `res-${++n}`, tenant_id: tenant, units: String(units), ttl_seconds: ttlSeconds } });
}
const capture = (input: Partial<CaptureHoldInput> & { hold_id: string }) =>
  captureHold({ ctx: ledger.ctx, input: { operation_id: `cap-${++n}`, units: "0", ...input } });
const release = (input: Partial<VoidHoldInput> & { hold_id: string }) => voidHold({ ctx: ledger.ctx, input: { operation_id: `void-${++n}`, ...input } });
const balance = (tenant: string) => getBalance({ ctx: ledger.ctx, input: { tenant_id: tenant } });

describe("captureHold", () => {
  it("moves the charge held → revenue and the rest held → available, once; emits ledger.captured", async () => {
    const h = await holdFor("c1", 1_000, 400);
    const r = await capture({ operation_id: "cap:c1", hold_id: h.holdId, units: "250", reason: "final" });
    expect(r).toMatchObject({
      replayed: false,
      balance: { tenantId: "c1", available: 750n, held: 0n },
      hold: { holdId: h.holdId, status: "captured", units: 400n, capturedUnits: 250n, releasedUnits: 150n },
    });
    expect(r.hold.settledAt).toBeInstanceOf(Date);
    expect(await ledger.legs(r.entryId)).toEqual([
      { account: "held", units: -400n },
      { account: "revenue", units: 250n },
      { account: "available", units: 150n },
    ]);
    const [event] = await ledger.events("ledger.captured");
    expect(event!.payload).toEqual({ ...movedFields(r), hold_id: h.holdId, operation_id: "cap:c1", units: "250", released_units: "150" });
  });

  it("captures the whole hold, or nothing (a zero charge releases everything)", async () => {
    const full = await holdFor("c2", 500, 500);
    const r1 = await capture({ hold_id: full.holdId, units: "500" });
    expect(r1.balance).toEqual({ tenantId: "c2", available: 0n, held: 0n });
    expect(await ledger.legs(r1.entryId)).toEqual([
      { account: "held", units: -500n },
      { account: "revenue", units: 500n },
    ]);
    const none = await holdFor("c3", 500, 200);
    const r2 = await capture({ hold_id: none.holdId, units: "0" });
    expect(r2.hold).toMatchObject({ status: "captured", capturedUnits: 0n, releasedUnits: 200n });
    expect(r2.balance).toEqual({ tenantId: "c3", available: 500n, held: 0n });
  });

  it("is allowed after the hold expired: the ledger never releases a hold by itself", async () => {
    const h = await holdFor("c4", 100, 100, 1);
    await new Promise((r) => setTimeout(r, 1_200));
    expect((await getHold({ ctx: ledger.ctx, input: { hold_id: h.holdId } })).expiresAt.getTime()).toBeLessThan(Date.now());
    expect(await balance("c4")).toEqual({ tenantId: "c4", available: 0n, held: 100n });
    expect((await capture({ hold_id: h.holdId, units: "60" })).balance).toEqual({ tenantId: "c4", available: 40n, held: 0n });
  });

  it("refuses a charge above the hold with invalid_request, moving nothing; the hold stays open", async () => {
    const h = await holdFor("c5", 100, 100);
    await expect(capture({ operation_id: "cap:c5", hold_id: h.holdId, units: "101" })).rejects.toMatchObject({ code: "invalid_request" });
    expect((await getHold({ ctx: ledger.ctx, input: { hold_id: h.holdId } })).status).toBe("open");
    expect(await capture({ operation_id: "cap:c5", hold_id: h.holdId, units: "100" })).toMatchObject({ replayed: false });
  });

  it("reports an unknown hold as not_found", async () => {
    await expect(capture({ hold_id: "hold_nope" })).rejects.toMatchObject({ code: "not_found" });
    await expect(release({ hold_id: "hold_nope" })).rejects.toMatchObject({ code: "not_found" });
    await expect(getHold({ ctx: ledger.ctx, input: { hold_id: "hold_nope" } })).rejects.toMatchObject({ code: "not_found" });
  });

  it("replays a retry with the same result and refuses any other operation on the settled hold", async () => {
    const h = await holdFor("c6", 1_000, 300);
    const first = await capture({ operation_id: "cap:c6", hold_id: h.holdId, units: "100" });
    await holdFor("c6", 0, 50);
    expect(await capture({ operation_id: "cap:c6", hold_id: h.holdId, units: "100" })).toEqual({ ...first, replayed: true });
    await expect(capture({ operation_id: "cap:c6", hold_id: h.holdId, units: "99" })).rejects.toMatchObject({ code: "conflict" });
    await expect(capture({ operation_id: "cap:c6-second", hold_id: h.holdId, units: "100" })).rejects.toMatchObject({ code: "conflict" });
    await expect(release({ operation_id: "void:c6", hold_id: h.holdId })).rejects.toMatchObject({ code: "conflict" });
    await expect(release({ operation_id: "cap:c6", hold_id: h.holdId })).rejects.toMatchObject({ code: "conflict" });
    expect(await balance("c6")).toEqual({ tenantId: "c6", available: 850n, held: 50n });
    expect((await ledger.events("ledger.captured")).filter((e) => e.payload.hold_id === h.holdId)).toHaveLength(1);
  });

  it("lets exactly one of many concurrent settlements of a hold win; duplicates of the winner replay it", async () => {
    const h = await holdFor("c7", 1_000, 1_000);
    const attempts = [
      ...Array.from({ length: 6 }, () => capture({ operation_id: "cap:c7:same", hold_id: h.holdId, units: "400" })),
      ...Array.from({ length: 4 }, (_, i) => capture({ operation_id: `cap:c7:${i}`, hold_id: h.holdId, units: String(100 + i) })),
      ...Array.from({ length: 4 }, (_, i) => release({ operation_id: `void:c7:${i}`, hold_id: h.holdId })),
    ];
    const results = await Promise.allSettled(attempts);
    const won = results.flatMap((r) => (r.status === "fulfilled" && !r.value.replayed ? [r.value] : []));
    expect(won).toHaveLength(1);
    for (const r of results) if (r.status === "rejected") expect(r.reason).toMatchObject({ code: "conflict" });
    const settled = await getHold({ ctx: ledger.ctx, input: { hold_id: h.holdId } });
    expect(settled.status).not.toBe("open");
    const b = await balance("c7");
    expect(b.held).toBe(0n);
    expect(b.available).toBe(1_000n - settled.capturedUnits);
    const [row] = await ledger.sql<{ n: number }>("SELECT count(*)::int AS n FROM transfers WHERE hold_id = $1 AND kind <> 'reserve'", h.holdId);
    expect(row!.n).toBe(1);
  });

  it("rejects invalid input with invalid_request", async () => {
    const h = await holdFor("c8", 100, 100);
    for (const bad of [{ units: "-1" }, { units: "x" }, { hold_id: "bad id" }, { operation_id: "" }, { reason: "x".repeat(513) }]) {
      await expect(capture({ hold_id: h.holdId, ...bad })).rejects.toMatchObject({ code: "invalid_request" });
    }
  });
});

describe("voidHold", () => {
  it("releases the whole hold held → available, once; emits ledger.voided", async () => {
    const h = await holdFor("v1", 1_000, 600);
    const r = await release({ operation_id: "void:v1", hold_id: h.holdId, reason: "provider failed" });
    expect(r).toMatchObject({
      replayed: false,
      balance: { tenantId: "v1", available: 1_000n, held: 0n },
      hold: { status: "voided", capturedUnits: 0n, releasedUnits: 600n },
    });
    expect(await ledger.legs(r.entryId)).toEqual([
      { account: "held", units: -600n },
      { account: "available", units: 600n },
    ]);
    const [event] = await ledger.events("ledger.voided");
    expect(event!.payload).toEqual({ ...movedFields(r), hold_id: h.holdId, operation_id: "void:v1", released_units: "600" });
    expect(await release({ operation_id: "void:v1", hold_id: h.holdId, reason: "provider failed" })).toEqual({ ...r, replayed: true });
    await expect(release({ operation_id: "void:v1", hold_id: h.holdId, reason: "another reason" })).rejects.toMatchObject({ code: "conflict" });
    await expect(release({ operation_id: "void:v1-again", hold_id: h.holdId })).rejects.toMatchObject({ code: "conflict" });
    await expect(capture({ hold_id: h.holdId, units: "1" })).rejects.toMatchObject({ code: "conflict" });
    expect(await balance("v1")).toEqual({ tenantId: "v1", available: 1_000n, held: 0n });
  });
});

describe("voidHold with a long note", () => {
  it("takes an operator's whole release reason (240 characters) behind managed-ai's prefix", async () => {
    const h = await holdFor("v0", 100, 100);
    const reason = `released: ${"r".repeat(240)}`;
    const r = await release({ operation_id: "void:v0", hold_id: h.holdId, reason });
    expect(r).toMatchObject({ replayed: false, hold: { status: "voided" } });
    const [row] = await ledger.sql<{ reason: string }>("SELECT reason FROM transfers WHERE id = $1", r.entryId);
    expect(row!.reason).toBe(reason);
  });
});
