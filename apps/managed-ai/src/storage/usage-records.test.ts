import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { validateData, type EventType } from "@gateway/events";
import type { Statements } from "@gateway/events-runtime";
import { createTestContext, type TestContext } from "../testing/context.js";
import { recordToOpen } from "../testing/records.js";
import type { RecordToSettle } from "../domain/ports.js";
import { UsageRecordWriter, type RecordToOpen } from "./usage-records.js";

/** The id the view usage_record_events derives for a record's event (migration 20261126010000), written out here. */
const usageRecordEventId = (recordId: string, kind: "reserved" | "settled") =>
  `evt_${createHash("md5").update(`${recordId}:${kind}`).digest("hex").slice(0, 26).toUpperCase()}`;

let t: TestContext;
beforeAll(async () => {
  t = await createTestContext();
});
afterAll(async () => {
  await t?.close();
});

/** A writer whose statements are counted (rows per statement: a batch statement takes arrays, one record's its values). */
function countingWriter() {
  const statements: number[] = [];
  let woken = 0;
  const sql: Statements = {
    query: (text, values) => {
      statements.push(Array.isArray(values[0]) ? values[0].length : 1);
      return t.ctx.sql.query(text, values);
    },
    eventsWritten: () => void woken++,
  };
  return { writer: new UsageRecordWriter(sql, t.ctx.logger, { kick: () => void woken++ }, { concurrency: 1 }), statements, woken: () => woken };
}

const settled = (id: string, status: "completed" | "failed" = "completed") => ({
  id,
  status,
  errorCode: null,
  holdId: `hold_${id}`,
  finalUnits: 100n,
  usageJson: '{"prompt_tokens":1}',
});
const rows = (ids: string[]) =>
  t.ctx.sql.query<{ id: string; status: string; final_units: bigint | null }>(
    "SELECT id, status, final_units FROM usage_records WHERE id = ANY($1) ORDER BY id",
    [ids],
  );
const eventsOf = async (ids: string[]) => (await t.outbox()).filter((e) => ids.includes(e.payload.request_id as string));

describe("UsageRecordWriter (group commit)", () => {
  it("opens and settles concurrent records in shared statements, each row with its own event", async () => {
    const { writer, statements, woken } = countingWriter();
    const records = Array.from({ length: 12 }, () => recordToOpen());
    const ids = records.map((r) => r.id);
    expect((await Promise.all(records.map((r) => writer.open(r)))).map((o) => o !== null)).toEqual(records.map(() => true));
    expect(statements.reduce((a, b) => a + b, 0)).toBe(12);
    expect(statements.length).toBeLessThan(12);
    expect((await rows(ids)).every((r) => r.status === "reserved")).toBe(true);

    expect(await Promise.all(ids.map((id) => writer.settle(settled(id))))).toEqual(ids.map(() => true));
    expect((await rows(ids)).map((r) => [r.status, r.final_units])).toEqual(ids.map(() => ["completed", 100n]));
    const events = await eventsOf(ids);
    expect(events.filter((e) => e.type === "managed_ai.request_reserved")).toHaveLength(12);
    expect(events.filter((e) => e.type === "managed_ai.request_settled")).toHaveLength(12);
    expect(woken()).toBe(statements.length);
  });

  it("settles a record once: a second settlement changes nothing and writes no event", async () => {
    const { writer } = countingWriter();
    const r = recordToOpen();
    await writer.open(r);
    const [first, second] = await Promise.all([writer.settle(settled(r.id, "completed")), writer.settle(settled(r.id, "failed"))]);
    expect([first, second].sort()).toEqual([false, true]);
    expect((await eventsOf([r.id])).filter((e) => e.type === "managed_ai.request_settled")).toHaveLength(1);
    expect(await writer.settle(settled(r.id, "failed"))).toBe(false);
  });

  it("claims an Idempotency-Key once even when both claims share a batch (written row by row)", async () => {
    const { writer, statements } = countingWriter();
    const blocker = writer.open(recordToOpen());
    const a = recordToOpen({ idempotencyKey: "same-key" });
    const b = recordToOpen({ idempotencyKey: "same-key" });
    const c = recordToOpen({ idempotencyKey: "other-key" });
    const results = await Promise.all([blocker, writer.open(a), writer.open(b), writer.open(c)]);
    expect(statements).toEqual([1, 3, 1, 1, 1]);
    expect(results.map((o) => o !== null)).toEqual([true, true, false, true]);
    expect((await rows([a.id, b.id, c.id])).map((r) => r.id).sort()).toEqual([a.id, c.id].sort());
    expect(await eventsOf([b.id])).toEqual([]);
  });

  it("gives each record's events from its row: catalog payloads, derived ids, the settlement as it was", async () => {
    const { writer } = countingWriter();
    const r = recordToOpen({ apiKeyId: null });
    await writer.open(r);
    expect(await writer.settle(settled(r.id))).toBe(true);
    // A later transition (a capture that failed afterwards) changes the record, not what its settlement said.
    await t.ctx.sql.query("UPDATE usage_records SET status = 'review', error_code = 'settlement_failed', final_units = NULL WHERE id = $1", [r.id]);
    type Row = { id: string; type: EventType; payload: Record<string, unknown>; request_id: string; seq: string };
    const events = await t.ctx.sql.query<Row>("SELECT id, type, payload, request_id, seq FROM usage_record_events WHERE request_id = $1 ORDER BY seq", [r.id]);
    expect(events.map((e) => [e.id, e.type])).toEqual([
      [usageRecordEventId(r.id, "reserved"), "managed_ai.request_reserved"],
      [usageRecordEventId(r.id, "settled"), "managed_ai.request_settled"],
    ]);
    expect(BigInt(events[0]!.seq)).toBeLessThan(BigInt(events[1]!.seq));
    for (const e of events) expect(validateData(e.type, e.payload as never)).toEqual(e.payload);
    expect(events[0]!.payload).toEqual({
      request_id: r.id,
      tenant_id: "ten_rec",
      key_id: null,
      service_alias: "chat",
      model_alias: "small",
      price_id: "price_1",
      reserved_units: "123",
      stream: false,
    });
    expect(events[1]!.payload).toEqual({
      request_id: r.id,
      tenant_id: "ten_rec",
      key_id: null,
      status: "completed",
      reserved_units: "123",
      final_units: "100",
      error_code: null,
    });
    expect(events.every((e) => e.request_id === r.id)).toBe(true);
  });
});

/*
 * A batch of one record goes to usage_records_open_one and usage_records_settle_one
 * (docs/decisions/0332), larger ones to the batch statements. Each case below runs once
 * through each, one record at a time, on a tenant of its own; what they answer and what
 * they leave in every table they write must be the same.
 */
describe("one record's statements and the batch statements", () => {
  type Step = (w: {
    open(r: Partial<RecordToOpen> & { id: string }): Promise<unknown>;
    settle(id: string, s: Partial<Omit<RecordToSettle, "id">>): Promise<unknown>;
  }) => Promise<unknown[]>;

  let tenants = 0;
  async function outcome(singleRow: boolean, allotment: { units: bigint; claimed?: bigint; state?: string } | null, steps: Step) {
    const p = `same_${++tenants}`;
    const tenantId = `ten_${p}`;
    if (allotment)
      await t.ctx.sql.query(
        `INSERT INTO allotments (id, tenant_id, state, hold_id, units, claimed, expires_at) VALUES ($1, $2, $3, $4, $5, $6, now() + interval '1 day')`,
        [`alt_${p}`, tenantId, allotment.state ?? "open", `hold_alt_${p}`, allotment.units.toString(), (allotment.claimed ?? 0n).toString()],
      );
    const names = new Set<string>();
    const sql: Statements = {
      query: (text, values, name) => {
        names.add(name ?? "");
        return t.ctx.sql.query(text, values, name);
      },
      eventsWritten: () => {},
    };
    const writer = new UsageRecordWriter(sql, t.ctx.logger, undefined, { concurrency: 1, singleRow });
    const answers = await steps({
      open: (r) => writer.open(recordToOpen({ tenantId, ...r, id: `req_${p}_${r.id}` })),
      settle: (id, s) =>
        writer.settle({ id: `req_${p}_${id}`, status: "completed", errorCode: null, holdId: null, finalUnits: 100n, usageJson: '{"prompt_tokens":1}', ...s }),
    });
    const q = (text: string) => t.ctx.sql.query<Record<string, unknown>>(text, [tenantId]);
    const state = {
      answers,
      records: await q(
        `SELECT id, api_key_id, status, mode, api, reserved_units, final_units, usage_json, error_code, hold_id, allotment_id,
           settled_at IS NOT NULL AS settled, settled_status, settled_final_units, settled_error_code,
           opened_txid IS NOT NULL AS opened, settled_txid IS NOT NULL AS settled_logged, settled_event_at IS NOT NULL AS event_at
         FROM usage_records WHERE tenant_id = $1 ORDER BY id`,
      ),
      unsettled: await q("SELECT s.id, s.status FROM usage_records_unsettled s JOIN usage_records u USING (id) WHERE u.tenant_id = $1 ORDER BY s.id"),
      settlements: await q(
        "SELECT record_id, tenant_id, api_key_id, status, reserved_units, final_units, error_code FROM usage_record_settlements WHERE tenant_id = $1 ORDER BY record_id",
      ),
      allotments: await q("SELECT id, state, units, claimed, carved, frozen, version FROM allotments WHERE tenant_id = $1"),
      keys: await q("SELECT api_key_id, key, request_id FROM idempotency_keys WHERE tenant_id = $1 ORDER BY key"),
    };
    return { names: [...names].sort(), state: JSON.parse(JSON.stringify(state, (_, v) => (typeof v === "bigint" ? v.toString() : v)).replaceAll(p, "P")) };
  }
  async function same(allotment: Parameters<typeof outcome>[1], steps: Step) {
    const one = await outcome(true, allotment, steps);
    const batch = await outcome(false, allotment, steps);
    expect(one.names).toEqual(["usage_records_open_one", "usage_records_settle_one"].filter((n) => batch.names.includes(n.replace("_one", ""))));
    expect(batch.names.every((n) => !n.endsWith("_one"))).toBe(true);
    expect(one.state).toEqual(batch.state);
    return one.state;
  }

  it("claim from an open allotment with room, and give back what each outcome leaves (completed, failed, review with a hold, nothing used)", async () => {
    const state = await same({ units: 1_000n }, async (w) => [
      await w.open({ id: "a" }),
      await w.open({ id: "b" }),
      await w.open({ id: "c" }),
      await w.open({ id: "d", reservedUnits: 0n }),
      await w.open({ id: "e", mode: "byok" }),
      await w.open({ id: "f", apiKeyId: null, api: "messages" }),
      await w.settle("a", { status: "completed", finalUnits: 100n }),
      await w.settle("b", { status: "failed", errorCode: "upstream_error", finalUnits: null, usageJson: null }),
      await w.settle("c", { status: "review", errorCode: "stream_interrupted", holdId: "hold_c", finalUnits: null }),
      await w.settle("d", { finalUnits: 0n }),
      await w.settle("e", { finalUnits: 150n }),
      await w.settle("a", { status: "failed" }),
      await w.settle("zz", {}),
    ]);
    // The premise: four claims and three give-backs (a: 123 - 100 back; b: all back; c carved; f still claimed).
    expect(state.allotments).toEqual([{ id: "alt_P", state: "open", units: "1000", claimed: "223", carved: "123", frozen: "0", version: "7" }]);
    expect(state.answers.slice(6)).toEqual([true, true, true, true, true, false, false]);
  });

  it("an allotment without room, one that is closing, and no allotment: the record holds for itself", async () => {
    const steps: Step = async (w) => [await w.open({ id: "a" }), await w.settle("a", { holdId: "hold_a" })];
    const full = await same({ units: 200n, claimed: 100n }, steps);
    expect(full.answers[0]).toEqual({ allotmentId: null, allotmentHoldId: null, ranOut: "alt_P" });
    const closing = await same({ units: 1_000n, state: "closing" }, steps);
    expect(closing.answers[0]).toEqual({ allotmentId: null, allotmentHoldId: null, ranOut: null });
    await same(null, steps);
  });

  it("claim an Idempotency-Key once in 24 hours, and not at all without a key id", async () => {
    const state = await same({ units: 1_000n }, async (w) => {
      const first = await w.open({ id: "a", idempotencyKey: "k" });
      const again = await w.open({ id: "b", idempotencyKey: "k" });
      await t.ctx.sql.query("UPDATE idempotency_keys SET created_at = created_at - interval '25 hours' WHERE key = 'k'", []);
      const later = await w.open({ id: "c", idempotencyKey: "k" });
      const keyless = await w.open({ id: "d", idempotencyKey: "k", apiKeyId: null });
      return [first, again, later, keyless];
    });
    expect(state.answers.map((a: unknown) => a !== null)).toEqual([true, false, true, true]);
    expect(state.keys).toEqual([{ api_key_id: "key_rec", key: "k", request_id: "req_P_c" }]);
  });
});
