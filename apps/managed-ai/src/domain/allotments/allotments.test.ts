import { describe, expect, it } from "vitest";
import { isAppError } from "@gateway/errors";
import { createLogger } from "@gateway/logger";
import type { TestManagedAiContext } from "../../testing/context.js";
import type { TestLedger } from "../../testing/ledger.js";
import { ledgerTestPerFile } from "../../testing/ledger-test.js";
import { until } from "../../testing/wait.js";
import type { Priced } from "../invocation/plan.js";
import { openReservation, settleCompleted, settleFailed, settleReview, usageOf, type Opened } from "../invocation/settlement.js";
import { reconcileUsage } from "../reconcile/reconcile.js";
import { releaseUsage } from "../usage/release.js";
import { Allotments } from "../../storage/allotments.js";
import { closeAllotments } from "./close.js";
import { planFor } from "../../testing/records.js";

/**
 * Allotments on a real database against the real ledger (a process of its own:
 * posts, releases, reserves from an allotment, voids): requests claim from the
 * tenant's allotment in their record's statement, charges are posted per request,
 * 402 stays the ledger's own refusal, and closing posts whatever a crash kept from
 * its batch before it gives the rest back. Balances are the tenant's accounts as the
 * journal keeps them (an open allotment's units all held).
 */
let L: TestLedger;
let ctx: TestManagedAiContext;
ledgerTestPerFile({ allotments: { enabled: true, lingerMs: 0, minUnits: 100n } }, (lt) => ({ L, ctx } = lt));

let n = 0;
const open = (plan: Priced) =>
  openReservation({ ctx, input: { plan, request: { requestId: `req_al_${++n}_${Date.now()}`, apiKeyId: null, idempotencyKey: null, stream: false } } });
const usage = (tokens: number) => usageOf({ prompt_tokens: tokens, completion_tokens: 0 })!;
const allotmentOf = async (tenantId: string, state = "open") => ctx.prisma.allotment.findFirst({ where: { tenantId, state } });
/** Lets the background opening of an allotment finish. */
const settle = (tenantId: string) => until(`${tenantId}'s allotment opens`, async () => (await allotmentOf(tenantId)) !== null);
/** The tenant's movements (operation ids) in the ledger. */
const operations = (tenantId: string) => L.operations(tenantId);
/** The charges posted from the tenant's allotments. */
const posts = async (tenantId: string) => (await L.movements(tenantId)).filter((m) => m.kind === "post");
const hold = async (holdId: string) => (await L.holdView(holdId))!;
const invariant = async (tenantId: string) => (await L.invariant(tenantId)).ok;

describe("allotments", () => {
  it("a tenant's first request holds for itself and opens an allotment; the next ones claim from it, each charge posted on its own", async () => {
    await L.credit("ten_a", 100_000n);
    const first = await open(planFor("ten_a", 1_000n));
    expect(first.holdId).not.toBeNull();
    expect(first.allotment).toBeNull();
    await settleCompleted({ ctx, input: { opened: first, plan: planFor("ten_a", 1_000n), usage: usage(300) } });
    await settle("ten_a");
    const a = (await allotmentOf("ten_a"))!;
    // A quarter of what was available after the first hold (99,000).
    expect(a.units).toBe(24_750n);
    const before = (await operations("ten_a")).length;
    const opened: Opened[] = [];
    for (let i = 0; i < 5; i++) opened.push(await open(planFor("ten_a", 1_000n)));
    // No movement in the ledger for the five reservations.
    expect(await operations("ten_a")).toHaveLength(before);
    expect(opened.every((o) => o.allotment?.id === a.id && o.holdId === null)).toBe(true);
    expect((await allotmentOf("ten_a"))!.claimed).toBe(5_000n);
    for (const [i, o] of opened.entries()) await settleCompleted({ ctx, input: { opened: o, plan: planFor("ten_a", 1_000n), usage: usage(100 + i) } });
    // Each completed record keeps only its charge claimed.
    expect((await allotmentOf("ten_a"))!.claimed).toBe(100n + 101n + 102n + 103n + 104n);
    await ctx.allotments.drain();
    expect(await posts("ten_a")).toHaveLength(5);
    expect(await hold(a.holdId!)).toMatchObject({ status: "open", captured: 510n });
    await until("the allotment's claim is reported", async () => (await L.claimed(a.holdId!)) === 510n);
    expect(await invariant("ten_a")).toBe(true);
  });

  it("a failed request gives its whole claim back; a request in review is carved out into a hold of its own", async () => {
    await L.credit("ten_b", 100_000n);
    await settleCompleted({ ctx, input: { opened: await open(planFor("ten_b", 1_000n)), plan: planFor("ten_b", 1_000n), usage: usage(10) } });
    await settle("ten_b");
    const failed = await open(planFor("ten_b", 1_000n));
    const review = await open(planFor("ten_b", 1_000n));
    expect((await allotmentOf("ten_b"))!.claimed).toBe(2_000n);
    await settleFailed({ ctx, input: { opened: failed, errorCode: "provider_error" } });
    await settleReview({ ctx, input: { opened: review, plan: planFor("ten_b", 1_000n), errorCode: "usage_unavailable" } });
    const a = (await allotmentOf("ten_b"))!;
    expect(a.claimed).toBe(0n);
    expect(a.carved).toBe(1_000n);
    const record = await ctx.prisma.usageRecord.findUniqueOrThrow({ where: { id: review.id } });
    expect(record.status).toBe("review");
    expect(await hold(record.holdId!)).toMatchObject({ status: "open", units: 1_000n, allotment: false });
    // The allotment gave the reservation up in the same step.
    expect((await hold(a.holdId!)).released).toBe(1_000n);
    expect(await invariant("ten_b")).toBe(true);
    // An operator releases it: the carved hold is voided, the allotment's count unchanged.
    const released = await releaseUsage({ ctx, input: { actor: "user:usr_op", id: review.id, reason: "no usage" } });
    expect(released).toEqual({ id: review.id, status: "failed", refunded: 1_000n });
    expect(await hold(record.holdId!)).toMatchObject({ status: "voided" });
    const after = (await allotmentOf("ten_b"))!;
    expect([after.claimed, after.carved]).toEqual([0n, 1_000n]);
    expect(await invariant("ten_b")).toBe(true);
  });

  it("a request the allotment cannot cover gets the allotment's rest back first, so only the ledger refuses, and only when the money is not there", async () => {
    await L.credit("ten_c", 10_000n);
    await settleCompleted({ ctx, input: { opened: await open(planFor("ten_c", 400n)), plan: planFor("ten_c", 400n), usage: usage(0) } });
    await settle("ten_c");
    const a = (await allotmentOf("ten_c"))!;
    expect(a.units).toBe(2_400n); // a quarter of 9,600
    const inAllotment = await open(planFor("ten_c", 2_000n));
    expect(inAllotment.allotment?.id).toBe(a.id);
    // 8,000 needs the 7,600 available plus the 400 left in the allotment: taken, with the rest given back first.
    const big = await open(planFor("ten_c", 8_000n));
    expect(big.allotment).toBeNull();
    expect(big.holdId).not.toBeNull();
    expect((await ctx.prisma.allotment.findUniqueOrThrow({ where: { id: a.id } })).state).toBe("closing");
    expect((await L.account("ten_c")).available).toBe(0n);
    // Nothing is left anywhere: the ledger refuses (402).
    const refused = await open(planFor("ten_c", 1n)).catch((err: unknown) => err);
    expect(isAppError(refused) && refused.code).toBe("insufficient_balance");
    await settleCompleted({ ctx, input: { opened: inAllotment, plan: planFor("ten_c", 2_000n), usage: usage(1_500) } });
    await settleCompleted({ ctx, input: { opened: big, plan: planFor("ten_c", 8_000n), usage: usage(8_000) } });
    await ctx.allotments.drain();
    expect(await invariant("ten_c")).toBe(true);
    // Closing gives back what the finished request left unused.
    const report = await closeAllotments({ ctx, input: { idleSeconds: 3_600, maxAgeSeconds: 3_600 } });
    expect(report.closed).toBeGreaterThanOrEqual(1);
    expect((await hold(a.holdId!)).status).toBe("voided");
    expect(await L.account("ten_c")).toEqual({ available: 500n, held: 0n });
    expect(await invariant("ten_c")).toBe(true);
  });

  it("what finished requests leave unused in a closing allotment is given back before a refusal stands", async () => {
    await L.credit("ten_f", 10_000n);
    await settleCompleted({ ctx, input: { opened: await open(planFor("ten_f", 400n)), plan: planFor("ten_f", 400n), usage: usage(0) } });
    await settle("ten_f");
    const a = (await allotmentOf("ten_f"))!; // a quarter of 9,600: 2,400
    const inFlight = await open(planFor("ten_f", 2_000n));
    expect(inFlight.allotment?.id).toBe(a.id);
    // Runs out: the 400 left go back, and this request holds 7,000 of the 8,000 available.
    await open(planFor("ten_f", 7_000n));
    // The in-flight request uses 100 of its 2,000: 1,900 return to the (closing) allotment.
    await settleCompleted({ ctx, input: { opened: inFlight, plan: planFor("ten_f", 2_000n), usage: usage(100) } });
    // 1,000 available in the ledger, 1,900 unused in the allotment: 2,500 fits only with both.
    const fits = await open(planFor("ten_f", 2_500n));
    expect(fits.holdId).not.toBeNull();
    expect((await operations("ten_f")).some((o) => o.startsWith(`freeze:${a.id}:`))).toBe(true);
    await ctx.allotments.drain();
    expect((await L.account("ten_f")).available).toBe(400n);
    expect(await invariant("ten_f")).toBe(true);
  });

  it("concurrent requests never claim more than the allotment holds, and the journal equals the records after closing", async () => {
    await L.credit("ten_d", 40_000n);
    await settleCompleted({ ctx, input: { opened: await open(planFor("ten_d", 100n)), plan: planFor("ten_d", 100n), usage: usage(1) } });
    await settle("ten_d");
    const a = (await allotmentOf("ten_d"))!;
    const results = await Promise.all(
      Array.from({ length: 60 }, async (_, i) => {
        const plan = planFor("ten_d", BigInt(100 + (i % 7) * 50));
        try {
          const o = await open(plan);
          await new Promise((r) => setTimeout(r, i % 5));
          if (i % 9 === 0) await settleFailed({ ctx, input: { opened: o, errorCode: "provider_error" } });
          else await settleCompleted({ ctx, input: { opened: o, plan, usage: usage(i * 3) } });
          return o;
        } catch (err) {
          if (isAppError(err) && err.code === "insufficient_balance") return null;
          throw err;
        }
      }),
    );
    const row = (await ctx.prisma.allotment.findUniqueOrThrow({ where: { id: a.id } }))!;
    expect(row.claimed + row.carved + row.frozen).toBeLessThanOrEqual(row.units);
    expect(results.some((o) => o?.allotment)).toBe(true);
    await ctx.allotments.drain();
    await ctx.prisma.allotment.updateMany({ where: { tenantId: "ten_d", state: "open" }, data: { lastClaimAt: new Date(0) } });
    await closeAllotments({ ctx, input: { idleSeconds: 1, maxAgeSeconds: 3_600 } });
    const records = await ctx.prisma.usageRecord.findMany({ where: { tenantId: "ten_d" } });
    const charged = records.reduce((sum, r) => sum + (r.status === "completed" ? (r.finalUnits ?? 0n) : 0n), 0n);
    const journal = (await L.holdsOf("ten_d")).reduce((sum, h) => sum + h.captured, 0n);
    expect(journal).toBe(charged);
    expect(await L.account("ten_d")).toEqual({ available: 40_000n - charged, held: 0n });
    expect(await invariant("ten_d")).toBe(true);
  });

  it("a call that outlives the reconciler's patience: its carved hold is captured, never a post from the allotment", async () => {
    await L.credit("ten_g", 100_000n);
    await settleCompleted({ ctx, input: { opened: await open(planFor("ten_g", 1_000n)), plan: planFor("ten_g", 1_000n), usage: usage(10) } });
    await settle("ten_g");
    const slow = await open(planFor("ten_g", 1_000n));
    expect(slow.allotment).not.toBeNull();
    // Still running, but old enough to look like an orphan: fenced (review) before anything else.
    await ctx.prisma.usageRecord.update({ where: { id: slow.id }, data: { createdAt: new Date(Date.now() - 3_600_000) } });
    await reconcileUsage({ ctx, input: { reservedAfterSeconds: 60 } });
    expect(await ctx.prisma.usageRecord.findUniqueOrThrow({ where: { id: slow.id } })).toMatchObject({
      status: "review",
      errorCode: "interrupted",
      holdId: null,
    });
    // Then the provider answers: the claim is carved out (the reconciler's own carve) and the charge captured from it.
    await settleCompleted({ ctx, input: { opened: slow, plan: planFor("ten_g", 1_000n), usage: usage(300) } });
    await ctx.allotments.drain();
    const carvedId = (await L.holdOf(slow.id))!.holdId;
    // Under post:<id> the ledger keeps the carve's release of the claim (which refuses any later post of it), never a post.
    expect(await L.transfer(`post:${slow.id}`)).toMatchObject({ kind: "release", units: 1_000n });
    expect((await posts("ten_g")).map((m) => m.operationId)).not.toContain(`post:${slow.id}`);
    expect(await hold(carvedId)).toMatchObject({ status: "captured", captured: 300n });
    // The reconciler's next pass finishes the record from the ledger.
    await reconcileUsage({ ctx, input: { reservedAfterSeconds: 60 } });
    expect(await ctx.prisma.usageRecord.findUniqueOrThrow({ where: { id: slow.id } })).toMatchObject({ status: "completed", finalUnits: 300n });
    expect(await invariant("ten_g")).toBe(true);
  });

  it("a completion the database lost after its charge was posted: the reconciler completes the record from the ledger's post", async () => {
    await L.credit("ten_h", 100_000n);
    await settleCompleted({ ctx, input: { opened: await open(planFor("ten_h", 1_000n)), plan: planFor("ten_h", 1_000n), usage: usage(10) } });
    await settle("ten_h");
    const call = await open(planFor("ten_h", 1_000n));
    await settleCompleted({ ctx, input: { opened: call, plan: planFor("ten_h", 1_000n), usage: usage(56) } });
    await ctx.allotments.drain();
    // A crash that loses acknowledged commits takes the record back to `reserved`.
    await ctx.prisma.usageRecord.update({
      where: { id: call.id },
      data: { status: "reserved", finalUnits: null, usageJson: null, settledAt: null, createdAt: new Date(Date.now() - 3_600_000) },
    });
    await ctx.sql.query("SELECT allotment_recount($1)", [call.allotment!.id]);
    const report = await reconcileUsage({ ctx, input: { reservedAfterSeconds: 60 } });
    expect(report.completed).toBe(1);
    expect(await ctx.prisma.usageRecord.findUniqueOrThrow({ where: { id: call.id } })).toMatchObject({ status: "completed", finalUnits: 56n, holdId: null });
    expect(await L.holdOf(call.id)).toBeNull();
    expect((await ctx.prisma.allotment.findUniqueOrThrow({ where: { id: call.allotment!.id } })).claimed).toBe(56n); // the first call held for itself
    expect(await invariant("ten_h")).toBe(true);
  });

  it("a pass right after the last settlements leaves their posts on their way to land, and replays nothing", async () => {
    await L.credit("ten_i", 100_000n);
    // The first request holds for itself (10 units) and opens the allotment.
    await settleCompleted({ ctx, input: { opened: await open(planFor("ten_i", 1_000n)), plan: planFor("ten_i", 1_000n), usage: usage(10) } });
    await settle("ten_i");
    const a = (await allotmentOf("ten_i"))!;
    // A live process whose batch lingers: its charges are on their way, not lost.
    const lingering = new Allotments(
      { sql: ctx.sql, ledgerCalls: ctx.ledgerCalls, logger: createLogger({ service: "t", level: "silent" }) },
      { ...ctx.allotments.options, lingerMs: 60_000 },
    );
    const busy = { ...ctx, allotments: lingering };
    for (const id of ["req_on_way_1", "req_on_way_2"]) {
      const opened = await openReservation({
        ctx: busy,
        input: { plan: planFor("ten_i", 1_000n), request: { requestId: id, apiKeyId: null, idempotencyKey: null, stream: false } },
      });
      await settleCompleted({ ctx: busy, input: { opened, plan: planFor("ten_i", 1_000n), usage: usage(300) } });
    }
    expect(lingering.pending).toBe(2);
    await ctx.allotments.drain();
    const first = await closeAllotments({ ctx, input: { idleSeconds: 0, maxAgeSeconds: 3_600, postGraceSeconds: 60 } });
    // (Other tenants' idle allotments of this file close in the same passes.)
    expect(first).toMatchObject({ posting: 1, reposted: 0 });
    expect((await ctx.prisma.allotment.findUniqueOrThrow({ where: { id: a.id } })).state).toBe("closing");
    expect((await posts("ten_i")).map((p) => p.operationId)).not.toContain("post:req_on_way_1");
    // The batch goes; the next pass finds the posts complete and closes.
    await lingering.drain();
    const second = await closeAllotments({ ctx, input: { idleSeconds: 0, maxAgeSeconds: 3_600, postGraceSeconds: 60 } });
    expect(second).toMatchObject({ posting: 0, reposted: 0 });
    expect((await ctx.prisma.allotment.findUniqueOrThrow({ where: { id: a.id } })).state).toBe("closed");
    const ops = (await posts("ten_i")).map((p) => p.operationId);
    expect(ops.filter((o) => o === "post:req_on_way_1" || o === "post:req_on_way_2")).toHaveLength(2);
    expect(await hold(a.holdId!)).toMatchObject({ status: "voided", captured: 600n });
    expect(await invariant("ten_i")).toBe(true);
  });

  it("a process that dies with charges unposted and requests in flight: the reconciler carves the orphans, closing posts the charges once and gives the rest back", async () => {
    await L.credit("ten_e", 100_000n);
    await settleCompleted({ ctx, input: { opened: await open(planFor("ten_e", 1_000n)), plan: planFor("ten_e", 1_000n), usage: usage(10) } });
    await settle("ten_e");
    const a = (await allotmentOf("ten_e"))!;
    // A second process's view of the same database: its posts never leave (it dies).
    const doomed = new Allotments(
      {
        sql: ctx.sql,
        ledgerCalls: {
          reserve: (request) => ctx.ledgerCalls.reserve(request),
          release: (request) => ctx.ledgerCalls.release(request),
          postCharges: () => new Promise(() => undefined),
        },
        logger: createLogger({ service: "t", level: "silent" }),
      },
      { ...ctx.allotments.options, lingerMs: 60_000 },
    );
    const dying = { ...ctx, allotments: doomed };
    const done = await openReservation({
      ctx: dying,
      input: { plan: planFor("ten_e", 1_000n), request: { requestId: "req_dies_done", apiKeyId: null, idempotencyKey: null, stream: false } },
    });
    await settleCompleted({ ctx: dying, input: { opened: done, plan: planFor("ten_e", 1_000n), usage: usage(700) } });
    await openReservation({
      ctx: dying,
      input: { plan: planFor("ten_e", 1_000n), request: { requestId: "req_dies_inflight", apiKeyId: null, idempotencyKey: null, stream: false } },
    });
    expect(doomed.pending).toBe(1);
    // Long after: the in-flight record is an orphan; the allotment idles.
    await ctx.prisma.usageRecord.update({ where: { id: "req_dies_inflight" }, data: { createdAt: new Date(Date.now() - 3_600_000) } });
    await ctx.prisma.allotment.update({ where: { id: a.id }, data: { lastClaimAt: new Date(0) } });
    // One pass fences the orphan (review), the next carves its hold out of the allotment.
    const reconciled = await reconcileUsage({ ctx, input: { reservedAfterSeconds: 60 } });
    expect(reconciled.toOperator).toBe(1);
    await reconcileUsage({ ctx, input: { reservedAfterSeconds: 60 } });
    const orphan = await ctx.prisma.usageRecord.findUniqueOrThrow({ where: { id: "req_dies_inflight" } });
    expect(orphan.status).toBe("review");
    expect((await hold(orphan.holdId!)).units).toBe(1_000n);
    const first = await closeAllotments({ ctx, input: { idleSeconds: 1, maxAgeSeconds: 3_600 } });
    expect(first.reposted).toBe(1);
    const second = await closeAllotments({ ctx, input: { idleSeconds: 1, maxAgeSeconds: 3_600 } });
    expect(second.closed).toBe(1);
    expect(await posts("ten_e")).toContainEqual(expect.objectContaining({ operationId: "post:req_dies_done", units: 700n }));
    expect(await hold(a.holdId!)).toMatchObject({ status: "voided", captured: 700n });
    // 10 + 700 charged, 1,000 held for the operator, the rest available.
    expect(await L.account("ten_e")).toEqual({ available: 100_000n - 710n - 1_000n, held: 1_000n });
    expect(await invariant("ten_e")).toBe(true);
  });
});
