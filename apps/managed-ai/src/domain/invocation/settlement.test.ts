import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AppError } from "@gateway/errors";
import type { ManagedAiContext } from "../context.js";
import { createTestContext, type TestContext } from "../../testing/context.js";
import type { Priced } from "./plan.js";
import { openReservation, settleCompleted, usageOf } from "./settlement.js";
import { usageRecordEventId } from "../../storage/usage-records.js";

/**
 * settleCompleted on a real database with a ledger whose capture the test
 * controls: the record's end state and the capture are sent at once
 * (docs/decisions/0164), and a failed capture leaves the record in review.
 */
type Capture = { operation_id: string; hold_id: string; units: string; reason: string };
let captureImpl: (req: Capture) => Promise<unknown> = async () => ({});
const captures: Capture[] = [];

let t: TestContext;
let ctx: ManagedAiContext;
beforeAll(async () => {
  const ledgerCalls = {
    reserve: async () => {
      throw new AppError("insufficient_balance", "The available balance does not cover this hold.");
    },
    capture: (req: Capture) => {
      captures.push(req);
      return captureImpl(req);
    },
  };
  t = await createTestContext({ ledgerCalls: ledgerCalls as never });
  ctx = t.ctx;
});
afterAll(() => t?.close());

// 1,000,000 units per Mtok in and out, no discount: the cost is the token count.
const plan = { tenantId: "ten_1", reservedUnits: 100n, discountBps: 0, price: { inputUnitsPerMtok: 1_000_000n, outputUnitsPerMtok: 1_000_000n } } as Priced;
const usage = usageOf({ prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 })!;

let n = 0;
async function reservedRecord(): Promise<string> {
  const id = `req_settle${++n}${Date.now()}`;
  await ctx.sql.query(
    `INSERT INTO usage_records (id, tenant_id, service_alias, model_alias, price_id, upstream_id, discount_bps, status, stream, input_tokens_bound,
       output_tokens_cap, reserved_units, hold_expires_at, updated_at)
     VALUES ($1, 'ten_1', 'ai', 'small', 'price_1', 'up_1', 0, 'reserved', false, 10, 10, 100, now() + interval '1 hour', now())`,
    [id],
  );
  return id;
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
    const id = await reservedRecord();
    // The capture answers only once the record says completed: were the two sent one after
    // the other (capture first), this would never finish.
    captureImpl = async () => {
      const until = Date.now() + 5_000;
      while ((await status(id)).status !== "completed") {
        if (Date.now() > until) throw new Error("the record was not written while the capture was under way");
        await new Promise((r) => setTimeout(r, 10));
      }
      return {};
    };
    expect(await settleCompleted(ctx, { id, holdId: "hold_1", tenantId: "ten_1", apiKeyId: null, allotment: null }, plan, usage)).toBe(19n);
    expect(captures.at(-1)).toEqual({ operation_id: `capture:${id}`, hold_id: "hold_1", units: "19", reason: `managed request ${id}` });
    expect(await status(id)).toMatchObject({ status: "completed", error_code: null, final_units: "19" });
    const events = (await t.outbox()).filter((e) => e.payload.request_id === id);
    expect(events.map((e) => [e.type, e.payload.status])).toEqual([["managed_ai.request_settled", "completed"]]);
  });

  it("moves the record to review with its usage when the capture fails, as if it had failed first", async () => {
    const id = await reservedRecord();
    captureImpl = async () => {
      throw new AppError("unavailable", "ledger is unavailable; try again later.");
    };
    expect(await settleCompleted(ctx, { id, holdId: "hold_2", tenantId: "ten_1", apiKeyId: null, allotment: null }, plan, usage)).toBe(19n);
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
    const id = await reservedRecord();
    const before = captures.length;
    expect(
      await settleCompleted(
        ctx,
        { id, holdId: null, tenantId: "ten_1", apiKeyId: null, allotment: null },
        { ...plan, reservedUnits: 0n },
        usageOf({ prompt_tokens: 0, completion_tokens: 0 })!,
      ),
    ).toBe(0n);
    expect(captures.length).toBe(before);
    expect(await status(id)).toMatchObject({ status: "completed", final_units: "0" });
  });
});

describe("openReservation refused by the ledger", () => {
  it("takes the record and its key claim back, and writes the record's reserved event (under its log's id) and the refusal", async () => {
    const id = `req_refused${Date.now()}`;
    const refusedPlan = {
      ...plan,
      mode: "managed",
      serviceAlias: "ai",
      modelAlias: "small",
      priceId: "price_1",
      upstream: { id: "up_1" },
      inputTokensBound: 10n,
      outputTokensCap: 10,
    } as unknown as Priced;
    await expect(openReservation(ctx, refusedPlan, { requestId: id, apiKeyId: "key_1", idempotencyKey: "idem-refused", stream: false })).rejects.toMatchObject({
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
