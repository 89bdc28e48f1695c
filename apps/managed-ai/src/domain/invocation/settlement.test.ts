import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { ManagedAiContext } from "../context.js";
import type { TestContext } from "../../testing/context.js";
import { gate, pausingLedger, type SwitchableLedger } from "../../testing/interleave.js";
import type { TestLedger } from "../../testing/ledger.js";
import { ledgerTestPerFile } from "../../testing/ledger-test.js";
import { until } from "../../testing/wait.js";
import type { Priced } from "./plan.js";
import { openReservation, settleCompleted, usageOf } from "./settlement.js";

/** The id the view usage_record_events derives for a record's event (migration 20261126010000), written out here. */
const usageRecordEventId = (recordId: string, kind: "reserved" | "settled") =>
  `evt_${createHash("md5").update(`${recordId}:${kind}`).digest("hex").slice(0, 26).toUpperCase()}`;

/**
 * settleCompleted on a real database against the real ledger (a process of its
 * own), behind a door that can hold a capture, take the ledger away, or count the
 * calls: the record's end state and the capture are sent at once
 * (docs/decisions/0164), and a failed capture leaves the record in review.
 */
const TENANT = "ten_1";

let L: TestLedger;
let door: SwitchableLedger;
let t: TestContext;
let ctx: ManagedAiContext;
ledgerTestPerFile({ door: true, fund: { tenant: TENANT, units: 1_000_000n } }, (lt) => ({ L, door, t, ctx } = lt));

// 1,000,000 units per Mtok in and out, no discount: the cost is the token count.
const plan = { tenantId: TENANT, reservedUnits: 100n, discountBps: 0, price: { inputUnitsPerMtok: 1_000_000n, outputUnitsPerMtok: 1_000_000n } } as Priced;
const usage = usageOf({ prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 })!;

let n = 0;
/** A `reserved` record and, unless free, its hold in the ledger (reserve:<id> of 100 units). */
async function reservedRecord(options: { free?: boolean } = {}): Promise<{ id: string; holdId: string | null }> {
  const id = `req_settle${++n}${Date.now()}`;
  const expires = new Date(Date.now() + 3_600_000);
  const hold = options.free
    ? null
    : await L.calls.reserve({
        operation_id: `reserve:${id}`,
        tenant_id: TENANT,
        units: "100",
        expires_at: expires.toISOString(),
        reason: `managed request ${id}`,
      });
  await ctx.sql.query(
    `INSERT INTO usage_records (id, tenant_id, service_alias, model_alias, price_id, upstream_id, discount_bps, status, stream, input_tokens_bound,
       output_tokens_cap, reserved_units, hold_id, hold_expires_at, updated_at)
     VALUES ($1, $2, 'ai', 'small', 'price_1', 'up_1', 0, 'reserved', false, 10, 10, $3, $4, $5, now())`,
    [id, TENANT, options.free ? 0 : 100, hold?.hold_id ?? null, expires],
  );
  return { id, holdId: hold?.hold_id ?? null };
}
const status = async (id: string) =>
  (
    await ctx.sql.query<{ status: string; error_code: string | null; final_units: string | null; usage_json: string | null; settled_at: Date | null }>(
      "SELECT status, error_code, final_units::text, usage_json, settled_at FROM usage_records WHERE id = $1",
      [id],
    )
  )[0]!;

describe("settleCompleted", () => {
  it("writes the record's end state while the capture is under way, and answers once both are done", async () => {
    const { id, holdId } = await reservedRecord();
    // The capture is held before it is sent until the record says completed: were the two
    // sent one after the other (capture first), the record would never get there.
    const g = gate();
    const held = { ...ctx, ledgerCalls: pausingLedger(ctx.ledgerCalls, (m, q) => m === "capture" && q.operation_id === `capture:${id}`, { gate: g }) };
    const settled = settleCompleted({ ctx: held, input: { opened: { id, holdId, tenantId: TENANT, apiKeyId: null, allotment: null }, plan, usage } });
    await g.reached;
    try {
      await until("the record is written while the capture is under way", async () => (await status(id)).status === "completed");
    } finally {
      g.open();
    }
    expect(await settled).toBe(19n);
    expect((await L.movements(TENANT)).find((m) => m.operationId === `capture:${id}`)).toEqual({
      operationId: `capture:${id}`,
      kind: "capture",
      units: 19n,
      holdId,
      reason: `managed request ${id}`,
    });
    expect(await L.holdView(holdId!)).toMatchObject({ status: "captured", captured: 19n, released: 81n });
    expect(await status(id)).toMatchObject({ status: "completed", error_code: null, final_units: "19" });
    const events = (await t.outbox()).filter((e) => e.payload.request_id === id);
    expect(events.map((e) => [e.type, e.payload.status])).toEqual([["managed_ai.request_settled", "completed"]]);
  });

  it("moves the record to review with its usage when the capture fails, as if it had failed first", async () => {
    const { id, holdId } = await reservedRecord();
    door.down(true);
    try {
      expect(await settleCompleted({ ctx, input: { opened: { id, holdId, tenantId: TENANT, apiKeyId: null, allotment: null }, plan, usage } })).toBe(19n);
    } finally {
      door.down(false);
    }
    expect(await L.holdView(holdId!)).toMatchObject({ status: "open" });
    const row = await status(id);
    expect(row).toMatchObject({ status: "review", error_code: "settlement_failed", final_units: null, settled_at: null });
    expect(JSON.parse(row.usage_json!)).toMatchObject({ prompt_tokens: 12, completion_tokens: 7 });
    const events = (await t.outbox()).filter((e) => e.payload.request_id === id);
    expect(events.map((e) => [e.type, e.payload.status])).toEqual([
      ["managed_ai.request_settled", "completed"],
      ["managed_ai.request_reconciled", "review"],
    ]);
    expect(events[1]!.payload).toMatchObject({ from_status: "completed", error_code: "settlement_failed", final_units: null });
  });

  it("charges a free request (no hold) without calling the ledger", async () => {
    const { id } = await reservedRecord({ free: true });
    const before = door.sent("capture");
    const movements = (await L.movements(TENANT)).length;
    expect(
      await settleCompleted({
        ctx,
        input: {
          opened: { id, holdId: null, tenantId: TENANT, apiKeyId: null, allotment: null },
          plan: { ...plan, reservedUnits: 0n },
          usage: usageOf({ prompt_tokens: 0, completion_tokens: 0 })!,
        },
      }),
    ).toBe(0n);
    expect(door.sent("capture")).toBe(before);
    expect(await L.movements(TENANT)).toHaveLength(movements);
    expect(await status(id)).toMatchObject({ status: "completed", final_units: "0" });
  });
});

describe("openReservation refused by the ledger", () => {
  it("takes the record and its key claim back, and writes the record's reserved event (under its log's id) and the refusal", async () => {
    const id = `req_refused${Date.now()}`;
    // A tenant the ledger holds nothing for: its reservation is refused.
    const refusedPlan = {
      ...plan,
      tenantId: "ten_broke",
      mode: "managed",
      serviceAlias: "ai",
      modelAlias: "small",
      priceId: "price_1",
      upstream: { id: "up_1" },
      inputTokensBound: 10n,
      outputTokensCap: 10,
    } as unknown as Priced;
    await expect(
      openReservation({ ctx, input: { plan: refusedPlan, request: { requestId: id, apiKeyId: "key_1", idempotencyKey: "idem-refused", stream: false } } }),
    ).rejects.toMatchObject({
      code: "insufficient_balance",
    });
    expect(await ctx.sql.query("SELECT id FROM usage_records WHERE id = $1", [id])).toEqual([]);
    expect(await ctx.sql.query("SELECT key FROM idempotency_keys WHERE request_id = $1", [id])).toEqual([]);
    const outbox = await ctx.sql.query<{ id: string; type: string; payload: Record<string, unknown> }>(
      "SELECT id, type, payload FROM outbox_events WHERE payload->>'request_id' = $1 ORDER BY seq",
      [id],
    );
    expect(outbox.map((e) => [e.id, e.type])).toEqual([
      [usageRecordEventId(id, "reserved"), "managed_ai.request_reserved"],
      [outbox[1]?.id, "managed_ai.request_refused"],
    ]);
    expect(outbox[0]!.payload).toMatchObject({ request_id: id, key_id: "key_1", reserved_units: "100", stream: false });
  });
});
