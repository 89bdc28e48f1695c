import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { validateData, type EventType } from "@gateway/events";
import type { Statements } from "@gateway/events-runtime";
import { createTestContext, type TestContext } from "../testing/context.js";
import { recordToOpen } from "../testing/records.js";
import { UsageRecordWriter } from "./usage-records.js";

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

/** A writer whose statements are counted (rows per statement). */
function countingWriter() {
  const statements: number[] = [];
  let woken = 0;
  const sql: Statements = {
    query: (text, values) => {
      statements.push((values[0] as unknown[]).length);
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
