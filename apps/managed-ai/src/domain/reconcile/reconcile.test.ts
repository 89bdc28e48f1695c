import { beforeAll, describe, expect, it } from "vitest";
import type { TestContext, TestManagedAiContext } from "../../testing/context.js";
import type { SwitchableLedger } from "../../testing/interleave.js";
import type { TestLedger } from "../../testing/ledger.js";
import { ledgerTestPerFile } from "../../testing/ledger-test.js";
import { holdsOf, recordHold } from "../usage/hold.js";
import { reconcileUsage } from "./reconcile.js";

/**
 * The reconciler on a real database (its conditional statements and outbox rows)
 * against the real ledger (a process of its own), behind a door that can take the
 * ledger away and counts the calls it sends: operation ids replay, a settled hold refuses
 * another settlement.
 */
const TENANT = "ten_1";

let L: TestLedger;
let door: SwitchableLedger;
let t: TestContext;
let ctx: TestManagedAiContext;
ledgerTestPerFile({ door: true, fund: { tenant: TENANT, units: 10_000_000n } }, (lt) => ({ L, door, t, ctx } = lt));

/**
 * What a request did before its record lost track of it: its reservation exactly as
 * the request sends it (reserve:<id>, from the record), then maybe capture:<id> as its
 * settlement sends it, or void:<id>. Answers the hold's id.
 */
async function as(id: string, then?: "capture" | "void", captureUnits = 0n): Promise<string> {
  const row = await ctx.prisma.usageRecord.findUniqueOrThrow({ where: { id } });
  const holds = holdsOf(ctx);
  const { hold_id } = await L.calls.reserve(holds.reserveRequest(recordHold(row)));
  if (then === "capture") await L.calls.capture({ operation_id: `capture:${id}`, hold_id, units: captureUnits.toString(), reason: `managed request ${id}` });
  if (then === "void") await L.calls.void({ operation_id: `void:${id}`, hold_id, reason: `managed request ${id}: x` });
  return hold_id;
}
/** The hold a record's request took, as the ledger holds it now. */
const holdOf = async (id: string) => (await L.holdOf(id))!;

let seq = 0;
async function record(fields: {
  status: string;
  error_code?: string | null;
  hold_id?: string | null;
  reserved?: bigint;
  age_seconds?: number;
}): Promise<string> {
  const id = `req_rec${++seq}${Date.now()}`;
  await ctx.sql.query(
    `INSERT INTO usage_records (id, tenant_id, api_key_id, service_alias, model_alias, price_id, upstream_id, discount_bps, status, stream,
       input_tokens_bound, output_tokens_cap, reserved_units, hold_id, error_code, hold_expires_at, created_at, updated_at)
     VALUES ($1, $2, NULL, 'ai', 'small', 'price_1', 'up_1', 0, $3, false, 10, 10, $4, $5, $6, $7, now() - make_interval(secs => $8), now())`,
    [
      id,
      TENANT,
      fields.status,
      (fields.reserved ?? 100n).toString(),
      fields.hold_id ?? null,
      fields.error_code ?? null,
      new Date(Date.now() + 3_600_000),
      fields.age_seconds ?? 0,
    ],
  );
  return id;
}
const row = async (id: string) =>
  (
    await ctx.sql.query<{ status: string; error_code: string | null; final_units: string | null; refunded_units: string | null; hold_id: string | null }>(
      "SELECT status, error_code, final_units::text, refunded_units::text, hold_id FROM usage_records WHERE id = $1",
      [id],
    )
  )[0];

describe("reconcileUsage", () => {
  it("finishes what the ledger can tell and leaves unknown usage with an open hold alone", async () => {
    const captured = await record({ status: "review", error_code: "ledger_unavailable" });
    await as(captured, "capture", 40n);
    const voided = await record({ status: "review", error_code: "provider_error" });
    await as(voided, "void");
    const openNothingOwed = await record({ status: "review", error_code: "ledger_unavailable" });
    const openHold = await as(openNothingOwed);
    const never = await record({ status: "review", error_code: "ledger_unavailable" });
    const orphan = await record({ status: "reserved", age_seconds: 3_600 });
    await as(orphan);
    const young = await record({ status: "reserved", age_seconds: 1 });
    await as(young);
    const unknown = await record({ status: "review", error_code: "usage_unavailable" });
    await as(unknown);

    const report = await reconcileUsage({ ctx, input: { reservedAfterSeconds: 60 } });
    expect(await row(captured)).toMatchObject({ status: "completed", final_units: "40", error_code: null });
    expect(await row(voided)).toMatchObject({ status: "failed", final_units: "0", refunded_units: "100", error_code: "provider_error" });
    expect(await row(openNothingOwed)).toMatchObject({ status: "failed", refunded_units: "100", hold_id: openHold });
    expect(await L.holdView(openHold)).toMatchObject({ status: "voided" });
    // Never reserved: the replay took a hold, which was given back at once.
    expect(await row(never)).toMatchObject({ status: "failed", refunded_units: "0" });
    expect(await holdOf(never)).toMatchObject({ status: "voided", captured: 0n });
    const stillOpen = [];
    for (const id of [captured, voided, openNothingOwed, never, orphan, young, unknown]) if ((await holdOf(id)).status === "open") stillOpen.push(id);
    expect(stillOpen).toEqual([orphan, young, unknown]);
    expect(await row(orphan)).toMatchObject({ status: "review", error_code: "interrupted" });
    expect(await row(young)).toMatchObject({ status: "reserved" });
    expect(await row(unknown)).toMatchObject({ status: "review", error_code: "usage_unavailable" });
    expect(report).toMatchObject({ completed: 1, failed: 3, toOperator: 1 });

    const events = (await t.outbox()).filter((e) => e.type === "managed_ai.request_reconciled");
    expect(events.map((e) => e.payload.request_id).sort()).toEqual([captured, voided, openNothingOwed, never, orphan].sort());
    // A second pass changes nothing and writes no event.
    await reconcileUsage({ ctx, input: { reservedAfterSeconds: 60 } });
    expect((await t.outbox()).filter((e) => e.type === "managed_ai.request_reconciled")).toHaveLength(5);
  });

  it("stops at the first unavailable ledger answer and changes nothing", async () => {
    const id = await record({ status: "review", error_code: "ledger_unavailable" });
    await as(id, "capture", 7n);
    door.down(true);
    try {
      const report = await reconcileUsage({ ctx, input: { reservedAfterSeconds: 60, concurrency: 1 } });
      expect(report.errors).toBe(1);
      expect(await row(id)).toMatchObject({ status: "review", error_code: "ledger_unavailable" });
    } finally {
      door.down(false);
    }
    await reconcileUsage({ ctx, input: { reservedAfterSeconds: 60 } });
    expect(await row(id)).toMatchObject({ status: "completed", final_units: "7" });
  });
});

describe("the check of settled records (a completed record written in parallel with its capture)", () => {
  // The migration starts the check at its own time; these records were settled after a deploy an hour ago, and
  // those the reconciler completed above, before it (else, on a slow machine, they come of age during these tests).
  beforeAll(async () => {
    await ctx.sql.query("UPDATE usage_records SET settled_at = now() - interval '2 hours' WHERE settled_at IS NOT NULL", []);
    await ctx.sql.query("UPDATE reconciler_checkpoints SET settled_at = now() - interval '1 hour', record_id = '' WHERE name = 'captures'", []);
  });

  /** A completed record for `finalUnits`, settled that long ago, over a hold the ledger holds as `then` left it. */
  async function completed(finalUnits: bigint, settledSecondsAgo: number, then?: "capture" | "void", capturedUnits = 0n) {
    const id = await record({ status: "completed" });
    const hold = await as(id, then, capturedUnits);
    await ctx.sql.query("UPDATE usage_records SET hold_id = $2, final_units = $3, settled_at = now() - make_interval(secs => $4) WHERE id = $1", [
      id,
      hold,
      finalUnits.toString(),
      settledSecondsAgo,
    ]);
    return { id, hold };
  }
  /** The tenant's captured holds. */
  const captures = async () => (await L.holdsOf(TENANT)).filter((h) => h.status === "captured").length;
  const pass = (settledAfterSeconds = 60) => reconcileUsage({ ctx, input: { reservedAfterSeconds: 3_600, settledAfterSeconds } });

  it("replays a missing capture once, leaves captured and young records alone, and sends a disagreeing record to review", async () => {
    const crashed = await completed(30n, 120); // a crash between the record's write and the capture
    const fine = await completed(25n, 90, "capture", 25n);
    const voided = await completed(10n, 80, "void"); // the ledger disagrees
    const young = await completed(5n, 5); // its capture may still be on its way

    const capturedBefore = await captures();
    expect(await pass()).toMatchObject({ checked: 3, recaptured: 1, toOperator: 1 });
    expect(await L.holdView(crashed.hold)).toMatchObject({ status: "captured", captured: 30n, released: 70n });
    expect(await row(crashed.id)).toMatchObject({ status: "completed", final_units: "30" });
    expect(await row(fine.id)).toMatchObject({ status: "completed", final_units: "25" });
    expect(await row(voided.id)).toMatchObject({ status: "review", error_code: "settlement_failed" });
    expect(await L.holdView(young.hold)).toMatchObject({ status: "open" });
    expect(await captures()).toBe(capturedBefore + 1);

    // The next pass starts after the checkpoint: nothing checked twice, nothing captured twice.
    expect(await pass()).toMatchObject({ checked: 0, recaptured: 0 });
    expect(await captures()).toBe(capturedBefore + 1);
    // Once old enough, the young record is checked too (its capture missing: replayed).
    await ctx.sql.query("UPDATE usage_records SET settled_at = now() - interval '61 seconds' WHERE id = $1", [young.id]);
    expect(await pass()).toMatchObject({ checked: 1, recaptured: 1 });
    expect(await L.holdView(young.hold)).toMatchObject({ status: "captured", captured: 5n });
  });

  it("with the ledger down, checks nothing and goes on from the same record once it is back", async () => {
    const r = await completed(12n, 2); // settled after the checkpoint the test above left
    const reads = door.sent("holds");
    door.down(true);
    try {
      const report = await pass(1);
      expect(report).toMatchObject({ checked: 0, recaptured: 0 });
      expect(report.errors).toBeGreaterThan(0);
    } finally {
      door.down(false);
    }
    expect(await L.holdView(r.hold)).toMatchObject({ status: "open" });
    expect(await pass(1)).toMatchObject({ checked: 1, recaptured: 1 });
    expect(await L.holdView(r.hold)).toMatchObject({ status: "captured", captured: 12n });
    expect(door.sent("holds")).toBeGreaterThan(reads);
  });

  it("walks records settled at the same moment in id order, a batch at a time, checking each once", async () => {
    const records = await Promise.all([1, 2, 3, 4, 5].map(() => completed(9n, 0)));
    await ctx.sql.query("UPDATE usage_records SET settled_at = now() - interval '1500 milliseconds' WHERE id = ANY($1)", [records.map((r) => r.id)]);
    const reads = door.sent("holds");
    const input = { reservedAfterSeconds: 3_600, settledAfterSeconds: 1, checkBatch: 2 };
    expect(await reconcileUsage({ ctx, input })).toMatchObject({ checked: 5, recaptured: 5 });
    expect(door.sent("holds") - reads).toBe(3); // 2 + 2 + 1
    for (const r of records) expect(await L.holdView(r.hold)).toMatchObject({ status: "captured", captured: 9n });
    expect(await reconcileUsage({ ctx, input })).toMatchObject({ checked: 0, recaptured: 0 });
  });

  it("does not look at records settled before the checkpoint (captured before they were marked, by the earlier order)", async () => {
    const old = await completed(12n, 7_200);
    expect(await pass()).toMatchObject({ checked: 0 });
    expect(await L.holdView(old.hold)).toMatchObject({ status: "open" });
  });
});
