import { describe, expect, it } from "vitest";
import { isAppError } from "@gateway/errors";
import type { ManagedAiContext } from "../context.js";
import type { TestContext } from "../../testing/context.js";
import type { TestLedger } from "../../testing/ledger.js";
import { ledgerTestPerFile } from "../../testing/ledger-test.js";
import { captureUsage } from "./capture.js";
import { releaseUsage } from "./release.js";

/**
 * Operator capture on a real database (its conditional update and outbox row)
 * against the real ledger (a process of its own): the same records as release,
 * units up to the reservation, capture:<id> taken at most once.
 */

const TENANT = "ten_capture";
const CREDIT = 1_000_000n;
const actor = "user:op1";

let t: TestContext;
let ctx: ManagedAiContext;
let L: TestLedger;

ledgerTestPerFile({ fund: { tenant: TENANT, units: CREDIT } }, (lt) => ({ L, t, ctx } = lt));

/** The tenant's balance (no allotments here: what its accounts hold). */
const balance = async () => {
  const b = await L.balance(TENANT);
  return { available: b.available, held: b.reserved };
};
/** The hold a record's request took (reserve:<id>). */
const holdOf = async (id: string) => (await L.holdOf(id))!;

let seq = 0;
/**
 * A record as a request leaves it (its hold taken as the request takes it, under
 * reserve:<id>). `expired`: its hold's expiry has passed since (the ledger takes no
 * reservation already past, so the record's expiry is the one that has passed).
 */
async function record(
  status: "review" | "reserved" | "completed",
  options: { reserved?: bigint; expired?: boolean; errorCode?: string | null; withHold?: boolean } = {},
) {
  const id = `req_cap${++seq}${Date.now()}`;
  const reserved = options.reserved ?? 1_000n;
  const expires = new Date(Date.now() + 3_600_000);
  const hold =
    options.withHold === false
      ? null
      : await L.calls.reserve({
          operation_id: `reserve:${id}`,
          tenant_id: TENANT,
          units: reserved.toString(),
          expires_at: expires.toISOString(),
          reason: `managed request ${id}`,
        });
  await ctx.sql.query(
    `INSERT INTO usage_records (id, tenant_id, api_key_id, service_alias, model_alias, price_id, upstream_id, discount_bps, status, stream,
       input_tokens_bound, output_tokens_cap, reserved_units, hold_id, error_code, hold_expires_at, created_at, updated_at)
     VALUES ($1, $2, NULL, 'ai', 'small', 'price_1', 'up_1', 0, $3, true, 10, 10, $4, $5, $6, $7, now(), now())`,
    [
      id,
      TENANT,
      status,
      reserved.toString(),
      hold?.hold_id ?? null,
      options.errorCode === undefined ? "usage_unavailable" : options.errorCode,
      options.expired ? new Date(Date.now() - 1_000) : expires,
    ],
  );
  return id;
}

const row = async (id: string) =>
  (
    await ctx.sql.query<{
      status: string;
      error_code: string | null;
      final_units: string | null;
      refunded_units: string | null;
      released_by: string | null;
      release_reason: string | null;
    }>("SELECT status, error_code, final_units::text, refunded_units::text, released_by, release_reason FROM usage_records WHERE id = $1", [id])
  )[0];

async function failure(promise: Promise<unknown>): Promise<{ code: string; message: string; param?: unknown }> {
  try {
    await promise;
  } catch (err) {
    if (isAppError(err)) return { code: err.code, message: err.message, param: err.extra?.param };
    throw err;
  }
  throw new Error("expected a failure");
}

describe("captureUsage", () => {
  it("charges the units on the hold, gives the rest back, completes the record and audits the reason", async () => {
    const before = await balance();
    const id = await record("review");
    const result = await captureUsage({ ctx, input: { actor, id, units: "400", reason: "provider invoice shows 400 units of work" } });
    expect(result).toEqual({ id, status: "completed", finalUnits: 400n, refunded: 600n });
    expect(await holdOf(id)).toMatchObject({ status: "captured", captured: 400n, released: 600n });
    expect(await balance()).toEqual({ available: before.available - 400n, held: before.held });
    expect(await row(id)).toMatchObject({
      status: "completed",
      error_code: "usage_unavailable",
      final_units: "400",
      refunded_units: "600",
      released_by: actor,
      release_reason: "provider invoice shows 400 units of work",
    });
    const events = (await t.outbox()).filter((e) => e.type === "managed_ai.request_captured" && e.payload.request_id === id);
    expect(events).toHaveLength(1);
    expect(events[0]!.payload).toMatchObject({
      actor,
      tenant_id: TENANT,
      reason: "provider invoice shows 400 units of work",
      final_units: "400",
      refunded_units: "600",
    });

    // The whole reservation, or nothing, are captures too; a reserved record past its hold's expiry may be captured.
    const all = await record("review", { reserved: 250n });
    expect(await captureUsage({ ctx, input: { actor, id: all, units: 250, reason: "all of it" } })).toMatchObject({ finalUnits: 250n, refunded: 0n });
    const none = await record("reserved", { expired: true, errorCode: null });
    expect(await captureUsage({ ctx, input: { actor, id: none, units: "0", reason: "nothing was used" } })).toMatchObject({ finalUnits: 0n, refunded: 1_000n });
    expect(await row(none)).toMatchObject({ status: "completed", error_code: "hold_expired", final_units: "0" });
  });

  it("refuses more units than the reservation (422 naming units) and changes nothing", async () => {
    const before = await balance();
    const id = await record("review", { reserved: 500n });
    expect(await failure(captureUsage({ ctx, input: { actor, id, units: "501", reason: "too much" } }))).toMatchObject({
      code: "validation_failed",
      param: "units",
    });
    expect(await row(id)).toMatchObject({ status: "review", final_units: null });
    expect(await holdOf(id)).toMatchObject({ status: "open" });
    expect(await balance()).toEqual({ available: before.available - 500n, held: before.held + 500n });
    // Malformed input is a 400, as for release.
    for (const input of [
      { actor, id, units: "-1", reason: "x" },
      { actor, id, units: 1.5, reason: "x" },
      { actor, id, units: "10", reason: "" },
      { actor, id, units: "10", reason: "x".repeat(241) },
      { actor: "", id, units: "10", reason: "x" },
    ]) {
      expect((await failure(captureUsage({ ctx, input: input as never }))).code, JSON.stringify(input)).toBe("invalid_request");
    }
  });

  it("is refused for records an operator may not decide: unknown, settled, or reserved with a live hold", async () => {
    expect((await failure(captureUsage({ ctx, input: { actor, id: "req_nope", units: "1", reason: "x" } }))).code).toBe("not_found");
    const live = await record("reserved", { errorCode: null });
    expect(await failure(captureUsage({ ctx, input: { actor, id: live, units: "1", reason: "x" } }))).toMatchObject({
      code: "conflict",
      message: expect.stringMatching(/not expired/),
    });
    const done = await record("completed", { errorCode: null });
    expect(await failure(captureUsage({ ctx, input: { actor, id: done, units: "1", reason: "x" } }))).toMatchObject({ code: "conflict" });
    // Released first: no capture after; captured first: no release after.
    const released = await record("review");
    await releaseUsage({ ctx, input: { actor, id: released, reason: "refund" } });
    expect((await failure(captureUsage({ ctx, input: { actor, id: released, units: "1", reason: "x" } }))).code).toBe("conflict");
    const captured = await record("review");
    await captureUsage({ ctx, input: { actor, id: captured, units: "1", reason: "x" } });
    expect((await failure(releaseUsage({ ctx, input: { actor, id: captured, reason: "x" } }))).code).toBe("conflict");
    expect((await failure(captureUsage({ ctx, input: { actor, id: captured, units: "1", reason: "x" } }))).code).toBe("conflict");
    for (const id of [live, done]) expect(await holdOf(id)).toMatchObject({ status: "open" });
  });

  it("charges once when retried after a crash that left the ledger captured and the record in review", async () => {
    const id = await record("review");
    const holdId = (await holdOf(id)).holdId;
    // The first attempt reached the ledger, then the process died before the record was written.
    await L.client.Capture({ operation_id: `capture:${id}`, hold_id: holdId, units: "300", reason: "invoice" });
    const after = await balance();
    const operations = (await L.operations(TENANT)).length;

    // The same request again: the ledger replays it.
    expect(await captureUsage({ ctx, input: { actor, id, units: "300", reason: "invoice" } })).toEqual({
      id,
      status: "completed",
      finalUnits: 300n,
      refunded: 700n,
    });
    expect(await balance()).toEqual(after);
    expect(await L.operations(TENANT)).toHaveLength(operations);
    expect(await row(id)).toMatchObject({ status: "completed", final_units: "300" });

    // Retried with another reason: found on the hold, still charged once.
    const other = await record("review");
    await L.client.Capture({ operation_id: `capture:${other}`, hold_id: (await holdOf(other)).holdId, units: "300", reason: "first wording" });
    const before = await balance();
    expect(await captureUsage({ ctx, input: { actor, id: other, units: "300", reason: "second wording" } })).toMatchObject({
      finalUnits: 300n,
      refunded: 700n,
    });
    expect(await balance()).toEqual(before);

    // Retried with other units: refused, and the record says what the ledger captured.
    const third = await record("review");
    await L.client.Capture({ operation_id: `capture:${third}`, hold_id: (await holdOf(third)).holdId, units: "100", reason: "first" });
    const unchanged = await balance();
    expect((await failure(captureUsage({ ctx, input: { actor, id: third, units: "300", reason: "first" } }))).code).toBe("conflict");
    expect(await balance()).toEqual(unchanged);
    expect(await row(third)).toMatchObject({ status: "completed", final_units: "100" });
  });

  it("charges nothing for a request whose reservation never reached the ledger", async () => {
    const id = await record("review", { withHold: false, errorCode: "ledger_unavailable" });
    const before = await balance();
    expect(await failure(captureUsage({ ctx, input: { actor, id, units: "10", reason: "x" } }))).toMatchObject({
      code: "conflict",
      message: expect.stringMatching(/never obtained/),
    });
    expect(await balance()).toEqual(before);
    expect(await holdOf(id)).toMatchObject({ status: "voided" });
    expect(await row(id)).toMatchObject({ status: "failed", final_units: "0", refunded_units: "0" });
  });
});
