import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AppError } from "@gateway/errors";
import type { Client } from "@gateway/grpc-kit";
import { LedgerCalls } from "@gateway/ledger-client";
import { createLogger } from "@gateway/logger";
import type { ledgerV1 } from "@gateway/protos";
import type { ManagedAiContext } from "../context.js";
import { createTestContext, type TestContext } from "../../testing/context.js";
import { reconcileUsage } from "./reconcile.js";

/**
 * The reconciler on a real database (its conditional statements and outbox
 * rows) against a ledger kept in memory that behaves like the real one for the
 * calls it makes: operation ids replay, a settled hold refuses another settlement.
 */
type Hold = { id: string; units: bigint; status: "open" | "captured" | "voided"; captured: bigint; released: bigint };

function memoryLedger() {
  const byOperation = new Map<string, { hold: Hold; reason?: string }>();
  const holds = new Map<string, Hold>();
  let down = false;
  let n = 0;
  let gotHolds = 0;
  const view = (h: Hold) => ({
    hold_id: h.id,
    status: h.status,
    units: h.units.toString(),
    captured_units: h.captured.toString(),
    released_units: h.released.toString(),
  });
  const guard = () => {
    if (down) throw new AppError("unavailable", "ledger is unavailable; try again later.");
  };
  const api = {
    async reserve(req: { operation_id: string; units: string; reason?: string }) {
      guard();
      const seen = byOperation.get(req.operation_id);
      if (seen) return { hold_id: seen.hold.id, replayed: true };
      const hold: Hold = { id: `hold_${++n}`, units: BigInt(req.units), status: "open", captured: 0n, released: 0n };
      holds.set(hold.id, hold);
      byOperation.set(req.operation_id, { hold });
      return { hold_id: hold.id, replayed: false };
    },
    async settle(kind: "capture" | "void", req: { operation_id: string; hold_id: string; units?: string; reason?: string }) {
      guard();
      const seen = byOperation.get(req.operation_id);
      if (seen) {
        if (seen.reason !== req.reason) throw new AppError("conflict", "operation id reused with other parameters");
        return { hold: view(seen.hold), replayed: true };
      }
      const hold = holds.get(req.hold_id);
      if (!hold) throw new AppError("not_found", "No such hold.");
      if (hold.status !== "open") throw new AppError("conflict", "settled");
      if (kind === "capture") {
        hold.status = "captured";
        hold.captured = BigInt(req.units ?? "0");
        hold.released = hold.units - hold.captured;
      } else {
        hold.status = "voided";
        hold.released = hold.units;
      }
      byOperation.set(req.operation_id, { hold, ...(req.reason !== undefined ? { reason: req.reason } : {}) });
      return { hold: view(hold), replayed: false };
    },
  };
  const client = {
    Reserve: api.reserve,
    Capture: (req: { operation_id: string; hold_id: string; units: string; reason?: string }) => api.settle("capture", req),
    Void: (req: { operation_id: string; hold_id: string; reason?: string }) => api.settle("void", req),
    async GetHold(req: { hold_id: string }) {
      guard();
      const h = holds.get(req.hold_id);
      if (!h) throw new AppError("not_found", "No such hold.");
      return view(h);
    },
    async GetHolds(req: { hold_ids: string[] }) {
      guard();
      gotHolds++;
      return { holds: req.hold_ids.flatMap((id) => (holds.has(id) ? [view(holds.get(id)!)] : [])) };
    },
    close() {},
  };
  return {
    // The package's client over it, each movement its own call, as managed-ai's context gets it.
    calls: new LedgerCalls(client as unknown as Client<typeof ledgerV1>, createLogger({ service: "memory-ledger", level: "silent" }), { batching: false }),
    client,
    holds,
    setDown: (v: boolean) => (down = v),
    /** GetHolds calls so far. */
    reads: () => gotHolds,
    /** What a request did before the record lost track: reserve (and maybe settle) under its operation ids. */
    async as(id: string, units: bigint, then?: "capture" | "void", captureUnits = 0n) {
      const r = await api.reserve({ operation_id: `reserve:${id}`, units: units.toString() });
      if (then === "capture")
        await api.settle("capture", { operation_id: `capture:${id}`, hold_id: r.hold_id, units: captureUnits.toString(), reason: `managed request ${id}` });
      if (then === "void") await api.settle("void", { operation_id: `void:${id}`, hold_id: r.hold_id, reason: `managed request ${id}: x` });
      return r.hold_id;
    },
  };
}

let t: TestContext;
let ledger: ReturnType<typeof memoryLedger>;
let ctx: ManagedAiContext;

beforeAll(async () => {
  ledger = memoryLedger();
  t = await createTestContext({ ledgerCalls: ledger.calls });
  ctx = t.ctx;
});
afterAll(() => t?.close());

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
     VALUES ($1, 'ten_1', NULL, 'ai', 'small', 'price_1', 'up_1', 0, $2, false, 10, 10, $3, $4, $5, now() + interval '1 hour', now() - make_interval(secs => $6), now())`,
    [id, fields.status, (fields.reserved ?? 100n).toString(), fields.hold_id ?? null, fields.error_code ?? null, fields.age_seconds ?? 0],
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
    await ledger.as(captured, 100n, "capture", 40n);
    const voided = await record({ status: "review", error_code: "provider_error" });
    await ledger.as(voided, 100n, "void");
    const openNothingOwed = await record({ status: "review", error_code: "ledger_unavailable" });
    const openHold = await ledger.as(openNothingOwed, 100n);
    const never = await record({ status: "review", error_code: "ledger_unavailable" });
    const orphan = await record({ status: "reserved", age_seconds: 3_600 });
    await ledger.as(orphan, 100n);
    const young = await record({ status: "reserved", age_seconds: 1 });
    await ledger.as(young, 100n);
    const unknown = await record({ status: "review", error_code: "usage_unavailable" });
    await ledger.as(unknown, 100n);

    const report = await reconcileUsage({ ctx, input: { reservedAfterSeconds: 60 } });
    expect(await row(captured)).toMatchObject({ status: "completed", final_units: "40", error_code: null });
    expect(await row(voided)).toMatchObject({ status: "failed", final_units: "0", refunded_units: "100", error_code: "provider_error" });
    expect(await row(openNothingOwed)).toMatchObject({ status: "failed", refunded_units: "100", hold_id: openHold });
    expect(ledger.holds.get(openHold)?.status).toBe("voided");
    // Never reserved: the replay took a hold, which was given back at once.
    expect(await row(never)).toMatchObject({ status: "failed", refunded_units: "0" });
    expect([...ledger.holds.values()].filter((h) => h.status === "open").length).toBe(3); // orphan, young, unknown
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
    await ledger.as(id, 100n, "capture", 7n);
    ledger.setDown(true);
    try {
      const report = await reconcileUsage({ ctx, input: { reservedAfterSeconds: 60, concurrency: 1 } });
      expect(report.errors).toBe(1);
      expect(await row(id)).toMatchObject({ status: "review", error_code: "ledger_unavailable" });
    } finally {
      ledger.setDown(false);
    }
    await reconcileUsage({ ctx, input: { reservedAfterSeconds: 60 } });
    expect(await row(id)).toMatchObject({ status: "completed", final_units: "7" });
  });
});

describe("the check of settled records (a completed record written in parallel with its capture)", () => {
  // The migration starts the check at its own time; these records were settled after a deploy an hour ago.
  beforeAll(() => ctx.sql.query("UPDATE reconciler_checkpoints SET settled_at = now() - interval '1 hour', record_id = '' WHERE name = 'captures'", []));

  /** A completed record for `finalUnits`, settled that long ago, over a hold the ledger holds as `then` left it. */
  async function completed(finalUnits: bigint, settledSecondsAgo: number, then?: "capture" | "void", capturedUnits = 0n) {
    const id = await record({ status: "completed" });
    const hold = await ledger.as(id, 100n, then, capturedUnits);
    await ctx.sql.query("UPDATE usage_records SET hold_id = $2, final_units = $3, settled_at = now() - make_interval(secs => $4) WHERE id = $1", [
      id,
      hold,
      finalUnits.toString(),
      settledSecondsAgo,
    ]);
    return { id, hold };
  }
  const captures = () => [...ledger.holds.values()].filter((h) => h.status === "captured").length;
  const pass = (settledAfterSeconds = 60) => reconcileUsage({ ctx, input: { reservedAfterSeconds: 3_600, settledAfterSeconds } });

  it("replays a missing capture once, leaves captured and young records alone, and sends a disagreeing record to review", async () => {
    const crashed = await completed(30n, 120); // a crash between the record's write and the capture
    const fine = await completed(25n, 90, "capture", 25n);
    const voided = await completed(10n, 80, "void"); // the ledger disagrees
    const young = await completed(5n, 5); // its capture may still be on its way

    const capturedBefore = captures();
    expect(await pass()).toMatchObject({ checked: 3, recaptured: 1, toOperator: 1 });
    expect(ledger.holds.get(crashed.hold)).toMatchObject({ status: "captured", captured: 30n, released: 70n });
    expect(await row(crashed.id)).toMatchObject({ status: "completed", final_units: "30" });
    expect(await row(fine.id)).toMatchObject({ status: "completed", final_units: "25" });
    expect(await row(voided.id)).toMatchObject({ status: "review", error_code: "settlement_failed" });
    expect(ledger.holds.get(young.hold)?.status).toBe("open");
    expect(captures()).toBe(capturedBefore + 1);

    // The next pass starts after the checkpoint: nothing checked twice, nothing captured twice.
    expect(await pass()).toMatchObject({ checked: 0, recaptured: 0 });
    expect(captures()).toBe(capturedBefore + 1);
    // Once old enough, the young record is checked too (its capture missing: replayed).
    await ctx.sql.query("UPDATE usage_records SET settled_at = now() - interval '61 seconds' WHERE id = $1", [young.id]);
    expect(await pass()).toMatchObject({ checked: 1, recaptured: 1 });
    expect(ledger.holds.get(young.hold)).toMatchObject({ status: "captured", captured: 5n });
  });

  it("with the ledger down, checks nothing and goes on from the same record once it is back", async () => {
    const r = await completed(12n, 2); // settled after the checkpoint the test above left
    const reads = ledger.reads();
    ledger.setDown(true);
    try {
      const report = await pass(1);
      expect(report).toMatchObject({ checked: 0, recaptured: 0 });
      expect(report.errors).toBeGreaterThan(0);
    } finally {
      ledger.setDown(false);
    }
    expect(ledger.holds.get(r.hold)?.status).toBe("open");
    expect(await pass(1)).toMatchObject({ checked: 1, recaptured: 1 });
    expect(ledger.holds.get(r.hold)).toMatchObject({ status: "captured", captured: 12n });
    expect(ledger.reads()).toBeGreaterThan(reads);
  });

  it("walks records settled at the same moment in id order, a batch at a time, checking each once", async () => {
    const records = await Promise.all([1, 2, 3, 4, 5].map(() => completed(9n, 0)));
    await ctx.sql.query("UPDATE usage_records SET settled_at = now() - interval '1500 milliseconds' WHERE id = ANY($1)", [records.map((r) => r.id)]);
    const reads = ledger.reads();
    const input = { reservedAfterSeconds: 3_600, settledAfterSeconds: 1, checkBatch: 2 };
    expect(await reconcileUsage({ ctx, input })).toMatchObject({ checked: 5, recaptured: 5 });
    expect(ledger.reads() - reads).toBe(3); // 2 + 2 + 1
    for (const r of records) expect(ledger.holds.get(r.hold)).toMatchObject({ status: "captured", captured: 9n });
    expect(await reconcileUsage({ ctx, input })).toMatchObject({ checked: 0, recaptured: 0 });
  });

  it("does not look at records settled before the checkpoint (captured before they were marked, by the earlier order)", async () => {
    const old = await completed(12n, 7_200);
    expect(await pass()).toMatchObject({ checked: 0 });
    expect(ledger.holds.get(old.hold)?.status).toBe("open");
  });
});
