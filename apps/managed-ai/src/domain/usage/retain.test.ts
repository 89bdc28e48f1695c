import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestContext, type TestContext } from "../../testing/context.js";
import { retainUsage } from "./retain.js";

let t: TestContext;
let dir: string;
const now = new Date("2026-11-27T12:00:00.000Z");

async function records(rows: { id: string; tenantId: string; createdAt: string; status?: string }[]) {
  await t.ctx.prisma.usageRecord.createMany({
    data: rows.map((r) => ({
      id: r.id,
      tenantId: r.tenantId,
      createdAt: new Date(r.createdAt),
      serviceAlias: "demo",
      modelAlias: "m",
      priceId: "price_1",
      upstreamId: "up",
      discountBps: 0,
      status: r.status ?? "completed",
      stream: false,
      inputTokensBound: 1,
      outputTokensCap: 1,
      reservedUnits: 200n,
      finalUnits: r.status === "reserved" ? null : 86n,
      usageJson: JSON.stringify({ prompt_tokens: 9, completion_tokens: 12, total_tokens: 21 }),
      holdExpiresAt: new Date(r.createdAt),
    })),
  });
}

const ids = async () => (await t.ctx.prisma.usageRecord.findMany({ select: { id: true }, orderBy: { id: "asc" } })).map((r) => r.id);

beforeAll(async () => {
  t = await createTestContext();
  dir = await mkdtemp(join(tmpdir(), "usage-export-"));
  await records([
    { id: "req_aug_a1", tenantId: "ten_a", createdAt: "2026-08-03T10:00:00.000Z" },
    { id: "req_aug_a0", tenantId: "ten_a", createdAt: "2026-08-01T00:00:00.000Z" },
    { id: "req_aug_b0", tenantId: "ten_b", createdAt: "2026-08-31T23:59:59.999Z", status: "failed" },
    { id: "req_sep_a0", tenantId: "ten_a", createdAt: "2026-09-10T00:00:00.000Z" },
    { id: "req_sep_a1", tenantId: "ten_a", createdAt: "2026-09-11T00:00:00.000Z", status: "reserved" },
    { id: "req_oct_a0", tenantId: "ten_a", createdAt: "2026-10-02T00:00:00.000Z" },
    { id: "req_nov_a0", tenantId: "ten_a", createdAt: "2026-11-01T00:00:00.000Z" },
  ]);
});
afterAll(async () => {
  await t?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("retainUsage", () => {
  it("writes each month that ended before the retention out per tenant, then removes it; a month with unsettled money stays", async () => {
    // 60 days before 2026-11-27 is in September: August leaves, September (and later) stays.
    const outcomes = await retainUsage({ ctx: t.ctx, input: { retentionDays: 60, exportDir: dir, now }, pool: t.pool });
    expect(outcomes).toEqual([{ month: "2026-08", outcome: "exported", tenants: 2, records: 3 }]);
    expect(await ids()).toEqual(["req_nov_a0", "req_oct_a0", "req_sep_a0", "req_sep_a1"]);
    expect((await readdir(join(dir, "2026-08"))).sort()).toEqual(["ten_a.ndjson", "ten_b.ndjson"]);
    const a = (await readFile(join(dir, "2026-08", "ten_a.ndjson"), "utf8"))
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(a.map((r) => r.id)).toEqual(["req_aug_a0", "req_aug_a1"]);
    expect(a[0]).toMatchObject({
      tenant_id: "ten_a",
      status: "completed",
      reserved_units: "200",
      final_units: "86",
      usage: { total_tokens: 21 },
      created_at: "2026-08-01T00:00:00.000Z",
    });
    const b = JSON.parse((await readFile(join(dir, "2026-08", "ten_b.ndjson"), "utf8")).trim());
    expect(b).toMatchObject({ id: "req_aug_b0", status: "failed" });

    // 40 days later September is due, but one of its records is still reserved.
    const later = new Date("2026-12-20T00:00:00.000Z");
    expect(await retainUsage({ ctx: t.ctx, input: { retentionDays: 60, exportDir: dir, now: later }, pool: t.pool })).toEqual([
      { month: "2026-09", outcome: "unsettled", tenants: 0, records: 1 },
    ]);
    expect(await ids()).toContain("req_sep_a0");

    // Settled, it leaves with the month.
    await t.ctx.prisma.usageRecord.update({ where: { id: "req_sep_a1" }, data: { status: "failed" } });
    expect(await retainUsage({ ctx: t.ctx, input: { retentionDays: 60, exportDir: dir, now: later }, pool: t.pool })).toEqual([
      { month: "2026-09", outcome: "exported", tenants: 1, records: 2 },
    ]);
    expect(await ids()).toEqual(["req_nov_a0", "req_oct_a0"]);
  });
});
