import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestContext, type TestContext } from "../../testing/context.js";
import { listPushMessages } from "./list.js";

let t: TestContext;
const at = new Date("2026-11-20T10:00:00.000Z");

beforeAll(async () => {
  t = await createTestContext();
  for (const [id, tenantId] of [
    ["inst_a", "ten_a"],
    ["inst_b", "ten_b"],
  ] as const)
    await t.ctx.prisma.appInstance.create({
      data: { id, tenantId, serviceId: "webhook-push", alias: "alerts", status: "active", config: { targets: [] }, version: 1 },
    });
  // Four messages of tenant A (two at the same instant: ties go by id), one of tenant B.
  const rows = [
    { id: "push_a1", tenantId: "ten_a", instanceId: "inst_a", createdAt: at },
    { id: "push_a2", tenantId: "ten_a", instanceId: "inst_a", createdAt: at },
    { id: "push_a3", tenantId: "ten_a", instanceId: "inst_a", createdAt: new Date(at.getTime() + 1000) },
    { id: "push_a4", tenantId: "ten_a", instanceId: "inst_a", createdAt: new Date(at.getTime() + 2000) },
    { id: "push_b1", tenantId: "ten_b", instanceId: "inst_b", createdAt: at },
  ];
  for (const r of rows)
    await t.ctx.prisma.pushMessage.create({
      data: {
        ...r,
        status: r.id === "push_a4" ? "partial" : "delivered",
        unitPrice: 1n,
        reservedUnits: 2n,
        chargedUnits: r.id === "push_a4" ? 1n : 2n,
        holdExpiresAt: at,
        deliveries: {
          create: [
            {
              targetId: "second",
              position: 1,
              type: "telegram",
              ok: r.id !== "push_a4",
              status: r.id === "push_a4" ? null : 200,
              error: r.id === "push_a4" ? "timeout" : null,
            },
            { targetId: "first", position: 0, type: "webhook", ok: true, status: 200 },
          ],
        },
      },
    });
});
afterAll(async () => t?.close());

describe("the push delivery log", () => {
  it("lists an instance's messages newest first with each target's outcome in target order, paged with before", async () => {
    const first = await listPushMessages({ ctx: t.ctx, input: { tenant_id: "ten_a", alias: "alerts", limit: 3, before: "" } });
    expect(first.map((m) => m.id)).toEqual(["push_a4", "push_a3", "push_a2"]);
    expect(first[0]!.deliveries.map((d) => [d.targetId, d.type, d.ok, d.status, d.error])).toEqual([
      ["first", "webhook", true, 200, null],
      ["second", "telegram", false, null, "timeout"],
    ]);
    const rest = await listPushMessages({ ctx: t.ctx, input: { tenant_id: "ten_a", alias: "alerts", limit: 3, before: "push_a2" } });
    expect(rest.map((m) => m.id)).toEqual(["push_a1"]);
  });

  it("keeps tenants apart: another tenant's instance or message is not found", async () => {
    expect((await listPushMessages({ ctx: t.ctx, input: { tenant_id: "ten_b", alias: "alerts", limit: 10, before: "" } })).map((m) => m.id)).toEqual([
      "push_b1",
    ]);
    await expect(listPushMessages({ ctx: t.ctx, input: { tenant_id: "ten_c", alias: "alerts", limit: 10, before: "" } })).rejects.toMatchObject({
      code: "not_found",
    });
    await expect(listPushMessages({ ctx: t.ctx, input: { tenant_id: "ten_b", alias: "alerts", limit: 10, before: "push_a1" } })).rejects.toMatchObject({
      code: "invalid_request",
    });
  });
});
