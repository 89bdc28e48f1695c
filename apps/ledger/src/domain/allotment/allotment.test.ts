import { describe, expect, it } from "vitest";
import { ledgerPerFile } from "../../testing/ledger-per-file.js";
import { testMoves } from "../../testing/test-moves.js";
import { getBalance } from "../balance/get.js";
import { captureHold } from "../hold/capture.js";
import { getHold } from "../hold/get.js";
import { voidHold } from "../hold/void.js";
import { checkInvariant } from "../invariant/check.js";
import { postAllotment } from "./post.js";
import { releaseAllotment } from "./release.js";
import { reportAllotments } from "./report.js";

const ledger = ledgerPerFile();

let n = 0;
const { fund, reserve } = testMoves(ledger);
const allot = async (tenant: string, funds: number, units: number) => {
  if (funds > 0) await fund(tenant, funds);
  return reserve({ tenant_id: tenant, units: String(units), allotment: true });
};
const post = (hold_id: string, units: number, operation_id = `post-${++n}`) =>
  postAllotment({ ctx: ledger.ctx, input: { operation_id, hold_id, units: String(units), reason: "req" } });
const release = (hold_id: string, units: number, operation_id = `rel-${++n}`) =>
  releaseAllotment({ ctx: ledger.ctx, input: { operation_id, hold_id, units: String(units) } });
const voidIt = (hold_id: string, operation_id = `void-${++n}`) => voidHold({ ctx: ledger.ctx, input: { operation_id, hold_id } });
const balance = (tenant: string) => getBalance({ ctx: ledger.ctx, input: { tenant_id: tenant } });
/** The account's own balances (the balance views move unclaimed allotments to available). */
const account = async (tenant: string) => {
  const [row] = await ledger.sql<{ available: bigint; held: bigint; debits_posted: bigint }>(
    "SELECT available, held, debits_posted FROM accounts WHERE tenant_id = $1",
    tenant,
  );
  return row!;
};
const invariantOk = async (tenant: string) => {
  const report = await checkInvariant({ ctx: ledger.ctx, input: { tenant_id: tenant } });
  expect(report.tenants[0]?.badAllotments).toBe(0n);
  return report.ok;
};
const transfersOf = async (tenant: string) => (await ledger.sql<{ n: number }>("SELECT count(*)::int AS n FROM transfers WHERE tenant_id = $1", tenant))[0]!.n;

describe("an allotment", () => {
  it("is a pending transfer spent by posts (held → revenue) and releases (held → available), then closed by a void of what is left", async () => {
    const a = await allot("a1", 1_000, 600);
    expect(a).toMatchObject({ replayed: false, units: 600n, balance: { available: 400n, held: 600n } });
    expect(await getHold({ ctx: ledger.ctx, input: { hold_id: a.holdId } })).toMatchObject({
      status: "open",
      allotment: true,
      capturedUnits: 0n,
      releasedUnits: 0n,
    });

    const p1 = await post(a.holdId, 150, "post:a1:1");
    expect(p1).toMatchObject({
      replayed: false,
      balance: { tenantId: "a1", available: 400n, held: 450n },
      hold: { holdId: a.holdId, units: 600n, status: "open", allotment: true, capturedUnits: 150n, releasedUnits: 0n, settledAt: null },
    });
    expect(await ledger.legs(p1.entryId)).toEqual([
      { account: "held", units: -150n },
      { account: "revenue", units: 150n },
    ]);
    expect(await account("a1")).toEqual({ available: 400n, held: 450n, debits_posted: 150n });

    const r1 = await release(a.holdId, 100);
    expect(r1).toMatchObject({ balance: { available: 500n, held: 350n }, hold: { status: "open", capturedUnits: 150n, releasedUnits: 100n } });
    expect(await ledger.legs(r1.entryId)).toEqual([
      { account: "held", units: -100n },
      { account: "available", units: 100n },
    ]);
    await post(a.holdId, 50);
    expect(await invariantOk("a1")).toBe(true);

    const v = await voidIt(a.holdId, "void:a1");
    expect(v).toMatchObject({
      balance: { available: 800n, held: 0n },
      hold: { status: "voided", allotment: true, capturedUnits: 200n, releasedUnits: 400n },
    });
    expect(await ledger.legs(v.entryId)).toEqual([
      { account: "held", units: -300n },
      { account: "available", units: 300n },
    ]);
    expect(await getHold({ ctx: ledger.ctx, input: { hold_id: a.holdId } })).toMatchObject({ status: "voided", capturedUnits: 200n, releasedUnits: 400n });
    expect(await balance("a1")).toEqual({ tenantId: "a1", available: 800n, held: 0n });
    const check = await checkInvariant({ ctx: ledger.ctx, input: { tenant_id: "a1" } });
    expect(check).toMatchObject({ ok: true, tenants: [{ credits: 1_000n, captured: 200n, journalRevenue: 200n, openHolds: 0n }] });

    // Closed: no more posts, releases or voids; a replay of the void answers as before.
    await expect(post(a.holdId, 1)).rejects.toMatchObject({ code: "conflict" });
    await expect(release(a.holdId, 1)).rejects.toMatchObject({ code: "conflict" });
    await expect(voidIt(a.holdId)).rejects.toMatchObject({ code: "conflict" });
    expect(await voidIt(a.holdId, "void:a1")).toEqual({ ...v, replayed: true });
  });

  it("publishes ledger.posted and ledger.released, and the void as ledger.voided of what was left", async () => {
    const a = await allot("a2", 500, 300);
    const p = await post(a.holdId, 40, "post:a2");
    const r = await release(a.holdId, 60, "rel:a2");
    const v = await voidIt(a.holdId, "void:a2");
    const mine = async (type: string) => (await ledger.events(type)).filter((e) => e.payload.tenant_id === "a2").map((e) => e.payload);
    expect(await mine("ledger.posted")).toEqual([
      { tenant_id: "a2", hold_id: a.holdId, entry_id: p.entryId, operation_id: "post:a2", units: "40", available_units: "200", reserved_units: "260" },
    ]);
    expect(await mine("ledger.released")).toEqual([
      { tenant_id: "a2", hold_id: a.holdId, entry_id: r.entryId, operation_id: "rel:a2", units: "60", available_units: "260", reserved_units: "200" },
    ]);
    expect(await mine("ledger.voided")).toEqual([
      { tenant_id: "a2", hold_id: a.holdId, entry_id: v.entryId, operation_id: "void:a2", released_units: "200", available_units: "460", reserved_units: "0" },
    ]);
  });

  it("refuses posts and releases beyond what is left, on holds that are no allotment, on unknown holds; and its capture", async () => {
    const a = await allot("a3", 1_000, 300);
    await post(a.holdId, 200);
    const before = await transfersOf("a3");
    await expect(post(a.holdId, 101)).rejects.toMatchObject({ code: "invalid_request" });
    await expect(release(a.holdId, 101)).rejects.toMatchObject({ code: "invalid_request" });
    await expect(post(a.holdId, 0)).rejects.toMatchObject({ code: "invalid_request" });
    await expect(post("hold_nope", 1)).rejects.toMatchObject({ code: "not_found" });
    const plain = await reserve({ tenant_id: "a3", units: "50" });
    await expect(post(plain.holdId, 1)).rejects.toMatchObject({ code: "invalid_request", message: expect.stringContaining("not an allotment") });
    await expect(release(plain.holdId, 1)).rejects.toMatchObject({ code: "invalid_request", message: expect.stringContaining("not an allotment") });
    const capture = captureHold({ ctx: ledger.ctx, input: { operation_id: "cap:a3", hold_id: a.holdId, units: "10" } });
    await expect(capture).rejects.toMatchObject({ code: "invalid_request", message: expect.stringContaining("allotment") });
    expect(await transfersOf("a3")).toBe(before + 1);
    // What is left is still there, exactly.
    expect((await post(a.holdId, 100)).hold).toMatchObject({ capturedUnits: 300n, releasedUnits: 0n });
    await expect(post(a.holdId, 1)).rejects.toMatchObject({ code: "invalid_request" });
    // A void of an allotment its posts used up moves nothing, and closes it.
    const v = await voidIt(a.holdId);
    expect(v).toMatchObject({ hold: { status: "voided", capturedUnits: 300n, releasedUnits: 0n }, balance: { available: 650n, held: 50n } });
    expect(await ledger.legs(v.entryId)).toEqual([]);
    expect(await invariantOk("a3")).toBe(true);
  });

  it("replays a post or release with its first answer (the allotment as it stood then); other parameters conflict", async () => {
    const a = await allot("a4", 1_000, 500);
    const first = await post(a.holdId, 100, "post:a4");
    const rel = await release(a.holdId, 50, "rel:a4");
    await post(a.holdId, 25);
    expect(await post(a.holdId, 100, "post:a4")).toEqual({ ...first, replayed: true });
    expect(await release(a.holdId, 50, "rel:a4")).toEqual({ ...rel, replayed: true });
    await expect(post(a.holdId, 99, "post:a4")).rejects.toMatchObject({ code: "conflict" });
    await expect(release(a.holdId, 100, "post:a4")).rejects.toMatchObject({ code: "conflict" });
    await expect(voidIt(a.holdId, "post:a4")).rejects.toMatchObject({ code: "conflict" });
    expect(await account("a4")).toMatchObject({ available: 550n, held: 325n, debits_posted: 125n });
    // In one batch: a post and its duplicate, answered alike.
    const [x, y] = await Promise.all([post(a.holdId, 5, "post:a4:dup"), post(a.holdId, 5, "post:a4:dup")]);
    expect([x.replayed, y.replayed].sort()).toEqual([false, true]);
    expect({ ...x, replayed: false }).toEqual({ ...y, replayed: false });
    expect(await invariantOk("a4")).toBe(true);
  });

  it("never lets concurrent posts exceed it", async () => {
    const a = await allot("a5", 1_000, 1_000);
    const results = await Promise.allSettled(Array.from({ length: 40 }, () => post(a.holdId, 30)));
    const ok = results.filter((r) => r.status === "fulfilled").length;
    expect(ok).toBe(33);
    for (const r of results) if (r.status === "rejected") expect(r.reason).toMatchObject({ code: "invalid_request" });
    expect(await getHold({ ctx: ledger.ctx, input: { hold_id: a.holdId } })).toMatchObject({ capturedUnits: 990n });
    expect(await invariantOk("a5")).toBe(true);
  });
});

describe("a reserve from an allotment", () => {
  it("releases from the allotment and reserves, in one step: two rows, the reserve's answer", async () => {
    const a = await allot("f1", 200, 150);
    const r = await reserve({ operation_id: "res:f1", tenant_id: "f1", units: "120", from_hold_id: a.holdId, from_units: "100" });
    expect(r).toMatchObject({ replayed: false, units: 120n, balance: { available: 30n, held: 170n } });
    expect(await getHold({ ctx: ledger.ctx, input: { hold_id: a.holdId } })).toMatchObject({ status: "open", capturedUnits: 0n, releasedUnits: 100n });
    const rows = await ledger.sql<{ kind: string; operation_id: string; units: bigint }>(
      "SELECT kind, operation_id, units FROM transfers WHERE tenant_id = 'f1' AND kind <> 'credit' ORDER BY seq",
    );
    expect(rows).toEqual([
      { kind: "reserve", operation_id: expect.any(String), units: 150n },
      { kind: "release", operation_id: "res:f1:from", units: 100n },
      { kind: "reserve", operation_id: "res:f1", units: 120n },
    ]);
    // A replay answers the reserve; other parameters conflict.
    expect(await reserve({ operation_id: "res:f1", tenant_id: "f1", units: "120", from_hold_id: a.holdId, from_units: "100" })).toEqual({
      ...r,
      replayed: true,
    });
    await expect(reserve({ operation_id: "res:f1", tenant_id: "f1", units: "120", from_hold_id: a.holdId, from_units: "10" })).rejects.toMatchObject({
      code: "conflict",
    });
    await expect(reserve({ operation_id: "res:f1", tenant_id: "f1", units: "120" })).rejects.toMatchObject({ code: "conflict" });
    // Itself an allotment, from another one.
    const b = await reserve({ tenant_id: "f1", units: "60", allotment: true, from_hold_id: a.holdId, from_units: "50" });
    expect(await getHold({ ctx: ledger.ctx, input: { hold_id: b.holdId } })).toMatchObject({ allotment: true, status: "open", units: 60n });
    expect(await getHold({ ctx: ledger.ctx, input: { hold_id: a.holdId } })).toMatchObject({ releasedUnits: 150n });
    expect(await account("f1")).toMatchObject({ available: 20n, held: 180n });
    expect(await invariantOk("f1")).toBe(true);
  });

  it("moves nothing when available after the release is short, or the allotment cannot give it", async () => {
    const a = await allot("f2", 200, 150);
    const before = await transfersOf("f2");
    await expect(reserve({ tenant_id: "f2", units: "151", from_hold_id: a.holdId, from_units: "100" })).rejects.toMatchObject({ code: "insufficient_balance" });
    await expect(reserve({ tenant_id: "f2", units: "10", from_hold_id: a.holdId, from_units: "151" })).rejects.toMatchObject({ code: "invalid_request" });
    await expect(reserve({ tenant_id: "f2", units: "10", from_hold_id: "hold_nope", from_units: "1" })).rejects.toMatchObject({ code: "not_found" });
    await expect(reserve({ tenant_id: "f2", units: "10", from_hold_id: a.holdId })).rejects.toMatchObject({ code: "invalid_request" });
    const plain = await reserve({ tenant_id: "f2", units: "10" });
    await expect(reserve({ tenant_id: "f2", units: "10", from_hold_id: plain.holdId, from_units: "5" })).rejects.toMatchObject({ code: "invalid_request" });
    // Another tenant's allotment is not there for this one.
    const other = await allot("f3", 100, 100);
    await expect(reserve({ tenant_id: "f2", units: "10", from_hold_id: other.holdId, from_units: "5" })).rejects.toMatchObject({ code: "not_found" });
    expect(await transfersOf("f2")).toBe(before + 1);
    expect(await getHold({ ctx: ledger.ctx, input: { hold_id: a.holdId } })).toMatchObject({ releasedUnits: 0n, capturedUnits: 0n });
    await voidIt(a.holdId);
    await expect(reserve({ tenant_id: "f2", units: "10", from_hold_id: a.holdId, from_units: "5" })).rejects.toMatchObject({ code: "conflict" });
    expect(await account("f2")).toMatchObject({ available: 190n, held: 10n });
    expect(await invariantOk("f2")).toBe(true);
  });

  it("names its release as the caller says, so that it and a post under that name exclude each other, whichever comes first", async () => {
    const a = await allot("f4", 1_000, 500);
    // The carve first: the request's post under the same name is refused and moves nothing.
    const carved = await reserve({
      operation_id: "reserve:x1",
      tenant_id: "f4",
      units: "100",
      from_hold_id: a.holdId,
      from_units: "100",
      from_operation_id: "post:x1",
    });
    await expect(post(a.holdId, 40, "post:x1")).rejects.toMatchObject({ code: "conflict" });
    // A replay of the carve is answered as stored.
    expect(
      await reserve({ operation_id: "reserve:x1", tenant_id: "f4", units: "100", from_hold_id: a.holdId, from_units: "100", from_operation_id: "post:x1" }),
    ).toMatchObject({ holdId: carved.holdId, replayed: true });
    // The post first: a carve under its name is refused and moves nothing.
    await post(a.holdId, 30, "post:x2");
    await expect(
      reserve({ operation_id: "reserve:x2", tenant_id: "f4", units: "100", from_hold_id: a.holdId, from_units: "100", from_operation_id: "post:x2" }),
    ).rejects.toMatchObject({ code: "conflict" });
    expect(await getHold({ ctx: ledger.ctx, input: { hold_id: a.holdId } })).toMatchObject({ capturedUnits: 30n, releasedUnits: 100n });
    const kinds = await ledger.sql<{ operation_id: string; kind: string }>(
      "SELECT operation_id, kind FROM transfers WHERE tenant_id = 'f4' AND operation_id LIKE '%x_' OR operation_id LIKE 'post:x_' ORDER BY seq",
    );
    expect(kinds).toEqual([
      { operation_id: "post:x1", kind: "release" },
      { operation_id: "reserve:x1", kind: "reserve" },
      { operation_id: "post:x2", kind: "post" },
    ]);
    // The release's name is its own, never the reserve's.
    await expect(
      reserve({ operation_id: "reserve:x3", tenant_id: "f4", units: "10", from_hold_id: a.holdId, from_units: "10", from_operation_id: "reserve:x3" }),
    ).rejects.toMatchObject({ code: "invalid_request" });
    expect(await account("f4")).toMatchObject({ available: 500n, held: 470n, debits_posted: 30n });
    expect(await invariantOk("f4")).toBe(true);
  });
});

describe("claim reports and the balance views", () => {
  it("show an allotment's unclaimed rest as available and its claims in flight as reserved; the newest version wins", async () => {
    const a = await allot("c1", 1_000, 400);
    const plain = await reserve({ tenant_id: "c1", units: "50" });
    expect(plain.balance).toEqual({ tenantId: "c1", available: 550n, held: 450n });
    // Nothing claimed: the whole allotment counts as available.
    expect(await balance("c1")).toEqual({ tenantId: "c1", available: 950n, held: 50n });
    const report = (claimed: number, version: number, hold_id = a.holdId) =>
      reportAllotments({ ctx: ledger.ctx, input: { reports: [{ hold_id, claimed_units: String(claimed), version: String(version) }] } });
    expect(await report(120, 2)).toBe(1);
    expect(await balance("c1")).toEqual({ tenantId: "c1", available: 830n, held: 170n });
    expect(await report(300, 1)).toBe(0);
    expect(await report(999, 5, "hold_unknown")).toBe(0);
    expect(await balance("c1")).toEqual({ tenantId: "c1", available: 830n, held: 170n });
    // Posts settle claims: in use = claimed − posted.
    await post(a.holdId, 100);
    expect(await balance("c1")).toEqual({ tenantId: "c1", available: 830n, held: 70n });
    // Claimed beyond what is left counts what is left; credits − posted = available + reserved.
    await release(a.holdId, 200);
    expect(await report(500, 3)).toBe(1);
    const view = await balance("c1");
    expect(view).toEqual({ tenantId: "c1", available: 750n, held: 150n });
    expect(view.available + view.held).toBe(1_000n - 100n);
    // A closed allotment no longer counts.
    await voidIt(a.holdId);
    expect(await balance("c1")).toEqual({ tenantId: "c1", available: 850n, held: 50n });
    expect(await balance("nobody")).toEqual({ tenantId: "nobody", available: 0n, held: 0n });
  });

  it("keep the highest version of several reports in one call", async () => {
    const a = await allot("c2", 100, 100);
    const n = await reportAllotments({
      ctx: ledger.ctx,
      input: {
        reports: [
          { hold_id: a.holdId, claimed_units: "30", version: "7" },
          { hold_id: a.holdId, claimed_units: "10", version: "9" },
          { hold_id: a.holdId, claimed_units: "50", version: "8" },
        ],
      },
    });
    expect(n).toBe(1);
    expect(await ledger.sql("SELECT claimed, claimed_version FROM allotments WHERE hold_id = $1", a.holdId)).toEqual([{ claimed: 10n, claimed_version: 9n }]);
    expect(await balance("c2")).toEqual({ tenantId: "c2", available: 90n, held: 10n });
  });
});
