import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AppError } from "@gateway/errors";
import type { PushBudgets } from "../app-context.js";
import { createTestContext, type TestContext } from "../../testing/context.js";
import { pushBudgets } from "./budgets.js";
import { recoverPushMessages } from "./recover.js";
import { sendPush } from "./send.js";

/** Budgets kept in memory as managed-ai keeps them: all or none, each claim settled once. */
class FakeBudgets {
  readonly spent = new Map<string, bigint>();
  readonly claims = new Map<string, { keys: string[]; units: bigint; settled: boolean }>();
  reserved = 0n;
  settleCalls = 0;
  failSettle = false;
  api(): PushBudgets {
    return {
      reserve: async ({ messageId, budgets, units }) => {
        for (const b of budgets) {
          if ((this.spent.get(b.id) ?? 0n) + this.reserved + units > b.limitUnits) {
            throw new AppError("conflict", "no room", { extra: { budget: { scope: b.scope } } });
          }
        }
        this.reserved += units;
        this.claims.set(messageId, { keys: budgets.map((b) => b.id), units, settled: false });
      },
      settle: async (messageId, finalUnits) => {
        this.settleCalls++;
        if (this.failSettle) throw new AppError("unavailable", "managed-ai down");
        const claim = this.claims.get(messageId);
        if (!claim || claim.settled) return;
        claim.settled = true;
        this.reserved -= claim.units;
        for (const id of claim.keys) this.spent.set(id, (this.spent.get(id) ?? 0n) + finalUnits);
      },
    };
  }
}

const budgets = new FakeBudgets();
let t: TestContext;
beforeAll(async () => {
  t = await createTestContext({ budgets: budgets.api() });
});
afterAll(async () => t?.close());

/** A push instance whose one target is an address nobody listens on (delivery fails fast, nothing charged). */
async function instance(id: string, tenantId: string, budget?: { units: number; period: "day" | "month" }) {
  await t.ctx.prisma.appInstance.create({
    data: {
      id,
      tenantId,
      serviceId: "webhook-push",
      alias: id,
      status: "active",
      version: 1,
      config: {
        targets: [{ id: "a", type: "webhook", url: "http://127.0.0.1:9/hook", enabled: true, secret: null }],
        ...(budget ? { budget_units: String(budget.units), budget_period: budget.period } : {}),
      },
    },
  });
}

describe("push budgets", () => {
  it("are the key's (forwarded) and the instance's own", () => {
    expect(pushBudgets({ id: "inst", config: { targets: [] } }, { apiKeyId: "key", units: 0n, period: "" })).toEqual([]);
    expect(
      pushBudgets({ id: "inst", config: { targets: [], budget_units: "9", budget_period: "month" } }, { apiKeyId: "key", units: 5n, period: "day" }),
    ).toEqual([
      { scope: "key", id: "key", limitUnits: 5n, period: "day" },
      { scope: "instance", id: "inst", limitUnits: 9n, period: "month" },
    ]);
  });

  it("refuse a send without room before any hold or delivery, and leave no message behind", async () => {
    await instance("inst_full", "ten_full", { units: 4, period: "day" }); // one target at 5 units: never fits
    t.ledger.balances.set("ten_full", 1_000n);
    const err = await sendPush({ ctx: t.ctx, input: { tenant_id: "ten_full", api_key_id: "key_1", alias: "inst_full", title: "t", text: "x" } }).catch(
      (e: unknown) => e,
    );
    expect(err).toMatchObject({ code: "conflict" });
    expect(await t.ctx.prisma.pushMessage.count({ where: { tenantId: "ten_full" } })).toBe(0);
    expect(t.ledger.calls.filter((c) => c.includes("push"))).toEqual([]);
    expect((await t.outbox("push.message_refused")).map((e) => e.payload)).toContainEqual(expect.objectContaining({ tenant_id: "ten_full", reason: "budget" }));
  });

  it("settle with the message's charge; a failed budget settlement keeps the message sending until recovery settles it", async () => {
    await instance("inst_b", "ten_b", { units: 100, period: "month" });
    t.ledger.balances.set("ten_b", 1_000n);
    budgets.failSettle = true;
    const sent = await sendPush({ ctx: t.ctx, input: { tenant_id: "ten_b", api_key_id: null, alias: "inst_b", title: "t", text: "x" } });
    expect(sent.chargedUnits).toBe(0n); // the target refused the connection
    const row = await t.ctx.prisma.pushMessage.findUniqueOrThrow({ where: { id: sent.messageId } });
    expect(row).toMatchObject({ status: "sending", budgeted: true });
    expect(budgets.reserved).toBe(5n);

    budgets.failSettle = false;
    await t.ctx.prisma.pushMessage.update({ where: { id: sent.messageId }, data: { updatedAt: new Date(Date.now() - 120_000) } });
    expect((await recoverPushMessages({ ctx: t.ctx, input: { olderThanMs: 60_000 } })).settled).toBe(1);
    expect(await t.ctx.prisma.pushMessage.findUniqueOrThrow({ where: { id: sent.messageId } })).toMatchObject({ status: "failed", chargedUnits: 0n });
    expect(budgets.reserved).toBe(0n);
    expect(budgets.spent.get("inst_b")).toBe(0n);
  });
});
