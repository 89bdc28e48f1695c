import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestContext, type TestContext } from "../testing/context.js";
import { recordToOpen } from "../testing/records.js";
import { UsageRecordWriter } from "./usage-records.js";

// The events the audit trail no longer copies (docs/decisions/0330) are read from the record:
// what the request view shows must be what the relay published, also after the log is pruned.

let t: TestContext;
let writer: UsageRecordWriter;
beforeAll(async () => {
  t = await createTestContext();
  writer = new UsageRecordWriter(t.ctx.sql, t.ctx.logger, undefined, { concurrency: 1 });
});
afterAll(async () => {
  await t?.close();
});

type Published = { id: string; type: string; payload: unknown; createdAt: string };

/** What the relay publishes for the request: the view it tails (usage_record_events). */
async function published(requestId: string): Promise<Published[]> {
  const rows = await t.ctx.sql.query<{ id: string; type: string; payload: unknown; created_at: Date }>(
    "SELECT id, type, payload, created_at FROM usage_record_events WHERE request_id = $1 ORDER BY created_at, type",
    [requestId],
  );
  return rows.map((r) => ({ id: r.id, type: r.type, payload: r.payload, createdAt: r.created_at.toISOString() }));
}

async function kept(requestId: string, tenantId: string): Promise<Published[]> {
  const rows = await t.ctx.store.usage.events(requestId, tenantId);
  return rows
    .map((r) => ({ id: r.id, type: r.type, payload: JSON.parse(r.dataJson) as unknown, createdAt: r.createdAt.toISOString() }))
    .sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.type.localeCompare(b.type));
}

describe("a request's events kept with its usage record", () => {
  it.each([
    { status: "completed" as const, errorCode: null, finalUnits: 77n },
    { status: "review" as const, errorCode: "ledger_unavailable", finalUnits: null },
  ])("are the events the relay published ($status), before and after the settlement log is pruned", async ({ status, errorCode, finalUnits }) => {
    const r = recordToOpen({ apiKeyId: status === "review" ? null : "key_rec" });
    await writer.open(r);
    await writer.settle({ id: r.id, status, errorCode, holdId: null, finalUnits, usageJson: null });
    const before = await published(r.id);
    expect(before.map((e) => e.type)).toEqual(["managed_ai.request_reserved", "managed_ai.request_settled"]);
    expect(await kept(r.id, r.tenantId)).toEqual(before);
    // The relay published and the pruner dropped the log's row: the record still says the same.
    await t.ctx.sql.query("DELETE FROM usage_record_settlements WHERE record_id = $1", [r.id]);
    expect((await published(r.id)).map((e) => e.type)).toEqual(["managed_ai.request_reserved"]);
    expect(await kept(r.id, r.tenantId)).toEqual(before);
    expect(await kept(r.id, "ten_other")).toEqual([]);
    expect(await kept("req_unknown", r.tenantId)).toEqual([]);
  });

  it("keep a refused request's reservation after its record is deleted", async () => {
    const r = recordToOpen({ idempotencyKey: "idem-refused" });
    await writer.open(r);
    const before = await published(r.id);
    expect(before.map((e) => e.type)).toEqual(["managed_ai.request_reserved"]);
    await t.ctx.transact((tx) => t.ctx.store.records.deleteRefused(tx, r));
    expect(await t.ctx.sql.query("SELECT id FROM usage_records WHERE id = $1", [r.id])).toEqual([]);
    expect(await kept(r.id, r.tenantId)).toEqual(before);
    expect(await kept(r.id, "ten_other")).toEqual([]);
  });
});
