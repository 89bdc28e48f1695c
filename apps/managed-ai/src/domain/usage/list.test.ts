import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestContext, type TestContext } from "../../testing/context.js";
import { listUsage } from "./list.js";

let t: TestContext;
const at = new Date("2026-11-20T10:00:00.000Z");

beforeAll(async () => {
  t = await createTestContext();
  // 7 records of tenant A (three share a timestamp, so ties are ordered by id) and one of tenant B.
  const rows = [
    ...Array.from({ length: 7 }, (_, i) => ({ id: `req_a${i}`, tenantId: "ten_a", createdAt: new Date(at.getTime() + (i < 3 ? 0 : i) * 1000) })),
    { id: "req_b0", tenantId: "ten_b", createdAt: at },
    { id: "req_byok0", tenantId: "ten_a", createdAt: at, mode: "byok" },
    { id: "req_byok1", tenantId: "ten_a", createdAt: at, mode: "byok" },
  ];
  await t.ctx.prisma.usageRecord.createMany({
    data: rows.map((r) => ({
      ...r,
      serviceAlias: "demo",
      modelAlias: "m",
      priceId: "price_1",
      upstreamId: "up",
      discountBps: 0,
      status: "completed",
      stream: false,
      inputTokensBound: 1,
      outputTokensCap: 1,
      reservedUnits: 1n,
      holdExpiresAt: at,
    })),
  });
});
afterAll(async () => {
  await t?.close();
});

describe("listUsage", () => {
  it("pages a tenant's records newest first with before, neither skipping nor repeating (ties by id)", async () => {
    const seen: string[] = [];
    let before = "";
    for (;;) {
      const page = await listUsage({ ctx: t.ctx, input: { tenant_id: "ten_a", limit: 3, before } });
      seen.push(...page.items.map((r) => r.id));
      if (page.items.length < 3) break;
      before = page.items[page.items.length - 1]!.id;
    }
    expect(seen).toEqual(["req_a6", "req_a5", "req_a4", "req_a3", "req_a2", "req_a1", "req_a0"]);
  });

  it("pages with the contract's cursor until next_cursor is empty, and filters by mode", async () => {
    const seen: string[] = [];
    let cursor = "";
    do {
      const page = await listUsage({ ctx: t.ctx, input: { tenant_id: "ten_a", limit: 2, cursor } });
      expect(page.items.length).toBeLessThanOrEqual(2);
      seen.push(...page.items.map((r) => r.id));
      cursor = page.nextCursor;
    } while (cursor);
    expect(seen).toEqual(["req_a6", "req_a5", "req_a4", "req_a3", "req_a2", "req_a1", "req_a0"]);
    const byok = await listUsage({ ctx: t.ctx, input: { tenant_id: "ten_a", mode: "byok" } });
    expect(byok).toEqual({ items: [expect.objectContaining({ id: "req_byok1", mode: "byok" }), expect.objectContaining({ id: "req_byok0" })], nextCursor: "" });
    const all = await listUsage({ ctx: t.ctx, input: { tenant_id: "ten_a", mode: "all", limit: 3 } });
    expect(all.items.map((r) => r.id)).toEqual(["req_byok1", "req_byok0", "req_a6"]);
    expect(all.nextCursor).not.toBe("");
    await expect(listUsage({ ctx: t.ctx, input: { tenant_id: "ten_a", cursor: "x1" } })).rejects.toMatchObject({ code: "invalid_request" });
  });

  it("refuses a before that is not one of the tenant's records", async () => {
    await expect(listUsage({ ctx: t.ctx, input: { tenant_id: "ten_a", limit: 3, before: "req_b0" } })).rejects.toMatchObject({ code: "invalid_request" });
    await expect(listUsage({ ctx: t.ctx, input: { tenant_id: "ten_a", limit: 3, before: "req_none" } })).rejects.toMatchObject({ code: "invalid_request" });
  });
});
