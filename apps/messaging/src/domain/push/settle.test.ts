import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { reserveOperation } from "@gateway/ledger-client";
import { createTestContext, type TestContext } from "../../testing/context.js";
import { pushRecoveryLoop, recoverPushMessages } from "./recover.js";
import { settlePush } from "./settle.js";

let t: TestContext;
beforeAll(async () => {
  t = await createTestContext();
});
afterAll(async () => t?.close());

async function message(id: string, tenantId: string, outcomes: (boolean | null)[], holdId: string | null) {
  await t.ctx.prisma.pushMessage.create({
    data: {
      id,
      tenantId,
      instanceId: "inst_1",
      status: "sending",
      unitPrice: 5n,
      reservedUnits: 5n * BigInt(outcomes.length),
      holdId,
      holdExpiresAt: new Date(Date.now() + 60_000),
      updatedAt: new Date(Date.now() - 120_000),
      deliveries: {
        create: outcomes.map((ok, position) => ({ targetId: `t${position}`, position, type: "webhook", ok, error: ok === false ? "http_500" : null })),
      },
    },
  });
}

describe("settling push messages", () => {
  it("recovers a message a crash left without its hold id: the reservation is replayed, delivered targets captured once", async () => {
    t.ledger.balances.set("ten_a", 100n);
    await t.ctx.ledger.reserve({ operation_id: reserveOperation("push_a"), tenant_id: "ten_a", units: "15", expires_at: "", reason: "" });
    await message("push_a", "ten_a", [true, false, null], null);

    expect((await recoverPushMessages({ ctx: t.ctx, input: { olderThanMs: 60_000 } })).settled).toBe(1);
    const row = await t.ctx.prisma.pushMessage.findUniqueOrThrow({ where: { id: "push_a" }, include: { deliveries: { orderBy: { position: "asc" } } } });
    expect(row).toMatchObject({ status: "partial", chargedUnits: 5n, recovered: true, holdId: "hold_1" });
    expect(row.deliveries.map((d) => [d.ok, d.error])).toEqual([
      [true, null],
      [false, "http_500"],
      [false, "interrupted"],
    ]);
    expect(t.ledger.balances.get("ten_a")).toBe(95n);

    // Settling again (another replica, a retry) moves nothing.
    const again = await settlePush(t.ctx, "push_a", { interrupted: true });
    expect(again.chargedUnits).toBe(5n);
    expect(t.ledger.calls.filter((c) => c === "capture:push_a")).toHaveLength(1);
    expect(t.ledger.balances.get("ten_a")).toBe(95n);
    expect((await t.outbox("push.message_settled")).map((e) => e.payload)).toEqual([
      { message_id: "push_a", tenant_id: "ten_a", instance_id: "inst_1", status: "partial", targets: 3, delivered: 1, charged_units: "5", recovered: true },
    ]);
  });

  it("settles a message whose reservation never happened as failed, charging nothing", async () => {
    await message("push_b", "ten_b", [null, null], null);
    const settled = await settlePush(t.ctx, "push_b", { interrupted: true });
    expect(settled).toMatchObject({ status: "failed", chargedUnits: 0n });
    expect(t.ledger.balances.get("ten_b") ?? 0n).toBe(0n);
  });

  it("voids the hold when nothing was delivered, and takes the ledger's word when the hold was settled before", async () => {
    t.ledger.balances.set("ten_c", 100n);
    const res = await t.ctx.ledger.reserve({ operation_id: reserveOperation("push_c"), tenant_id: "ten_c", units: "10", expires_at: "", reason: "" });
    await message("push_c", "ten_c", [false, false], res.hold_id);
    expect(await settlePush(t.ctx, "push_c", { interrupted: false })).toMatchObject({ status: "failed", chargedUnits: 0n });
    expect(t.ledger.balances.get("ten_c")).toBe(100n);

    const held = await t.ctx.ledger.reserve({ operation_id: reserveOperation("push_d"), tenant_id: "ten_c", units: "10", expires_at: "", reason: "" });
    await message("push_d", "ten_c", [true, true], held.hold_id);
    await t.ctx.ledger.capture({ operation_id: "capture:elsewhere", hold_id: held.hold_id, units: "10", reason: "" });
    expect(await settlePush(t.ctx, "push_d", { interrupted: false })).toMatchObject({ status: "delivered", chargedUnits: 10n });
  });
});

describe("when to look for interrupted messages again", () => {
  it("when the oldest message still sending becomes interrupted, or a full interval from now when none is sending", async () => {
    await recoverPushMessages({ ctx: t.ctx, input: { olderThanMs: 60_000 } }); // whatever the tests above left
    const sentAt = new Date(Date.now() - 10_000);
    await message("push_fresh", "ten_f", [null], null);
    await t.ctx.prisma.pushMessage.update({ where: { id: "push_fresh" }, data: { updatedAt: sentAt } });
    const looked = await recoverPushMessages({ ctx: t.ctx, input: { olderThanMs: 60_000 } });
    expect(looked).toEqual({ settled: 0, nextAt: sentAt.getTime() + 60_000 });

    await t.ctx.prisma.pushMessage.update({ where: { id: "push_fresh" }, data: { status: "failed" } });
    const before = Date.now();
    const idle = await recoverPushMessages({ ctx: t.ctx, input: { olderThanMs: 60_000 } });
    expect(idle.settled).toBe(0);
    expect(idle.nextAt).toBeGreaterThanOrEqual(before + 60_000);
    expect(idle.nextAt).toBeLessThanOrEqual(Date.now() + 60_000);
  });
});

describe("the recovery loop", () => {
  it("settles a message when it becomes interrupted, not at the next poll a minute later", async () => {
    await recoverPushMessages({ ctx: t.ctx, input: { olderThanMs: 60_000 } }); // whatever the tests above left
    t.ledger.balances.set("ten_l", 100n);
    const held = await t.ctx.ledger.reserve({ operation_id: reserveOperation("push_l"), tenant_id: "ten_l", units: "5", expires_at: "", reason: "" });
    await message("push_l", "ten_l", [null], held.hold_id);
    // Interrupted in half a second; the loop's poll (PUSH_RECOVERY_AFTER_MS) is a minute.
    await t.ctx.prisma.pushMessage.update({ where: { id: "push_l" }, data: { updatedAt: new Date(Date.now() - 59_500) } });
    const loop = pushRecoveryLoop(t.ctx, { afterMs: 60_000, intervalMs: 200 });
    loop.start();
    try {
      const until = Date.now() + 15_000;
      let status = "sending";
      while (status === "sending" && Date.now() < until) {
        await new Promise((r) => setTimeout(r, 50));
        status = (await t.ctx.prisma.pushMessage.findUniqueOrThrow({ where: { id: "push_l" } })).status;
      }
      expect(status).toBe("failed");
      expect(loop.nextPollMs).toBe(60_000);
    } finally {
      await loop.stop();
    }
  });
});
