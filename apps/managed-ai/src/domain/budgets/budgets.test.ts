import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AppError } from "@gateway/errors";
import { createTestContext, type TestContext } from "../../testing/context.js";
import { openMeter } from "../invocation/meter.js";
import type { Priced } from "../invocation/plan.js";
import type { Budget } from "./budget.js";
import { periodBounds } from "./period.js";
import { reserveBudgets } from "./reserve.js";
import { BudgetReservations } from "../../storage/budgets.js";
import { settleBudgetClaims, settleBudgets, sweepBudgetClaims } from "./settle.js";
import { releaseUsage } from "../usage/release.js";
import { viewBudgets } from "./view.js";

let t: TestContext;
beforeAll(async () => {
  t = await createTestContext();
});
afterAll(async () => {
  await t?.close();
});

describe("periodBounds", () => {
  it("is the UTC day or calendar month that contains the moment", () => {
    expect(periodBounds("day", new Date("2026-03-31T23:59:59.999Z"))).toEqual({
      start: new Date("2026-03-31T00:00:00Z"),
      resetsAt: new Date("2026-04-01T00:00:00Z"),
    });
    expect(periodBounds("month", new Date("2026-12-15T10:00:00Z"))).toEqual({
      start: new Date("2026-12-01T00:00:00Z"),
      resetsAt: new Date("2027-01-01T00:00:00Z"),
    });
    expect(periodBounds("month", new Date("2028-02-29T00:00:00Z")).resetsAt).toEqual(new Date("2028-03-01T00:00:00Z"));
  });
});

let n = 0;
/** A byok instance (records without holds: no ledger needed) with an optional budget, and a plan on it. */
async function byokInstance(budget?: { units: bigint; period: "day" | "month" }) {
  const id = `inst_b${++n}`;
  const tenantId = `ten_b${n}`;
  await t.ctx.prisma.serviceInstance.create({
    data: {
      id,
      tenantId,
      serviceId: "ai-model",
      alias: "chat",
      status: "active",
      mode: "byok",
      version: 1,
      config: {
        provider: "openai",
        base_url: "https://example.test/v1",
        default_model: "m",
        pricing: { input_units_per_mtok: "1000000", output_units_per_mtok: "2000000" },
        ...(budget ? { budget_units: budget.units.toString(), budget_period: budget.period } : {}),
      },
    },
  });
  const plan = (reservedUnits: bigint): Priced => ({
    mode: "byok",
    tenantId,
    serviceAlias: "chat",
    modelAlias: "m",
    upstream: { id, model: "m", baseUrl: "https://example.test/v1", apiKey: "sk", egress: "customer" },
    priceId: "",
    price: { inputUnitsPerMtok: 1_000_000n, outputUnitsPerMtok: 2_000_000n },
    discountBps: 0,
    inputTokensBound: reservedUnits,
    outputTokensCap: 0,
    reservedUnits,
  });
  return { id, tenantId, plan };
}

const keyBudget = (id: string, limitUnits: bigint, period: "day" | "month" = "day"): Budget => ({ scope: "key", id, limitUnits, period });
const usage = (promptTokens: bigint, completionTokens = 0n) => ({
  promptTokens,
  completionTokens,
  raw: { prompt_tokens: Number(promptTokens), completion_tokens: Number(completionTokens) },
});
const budgetOf = (err: unknown) => (err instanceof AppError ? (err.extra as { budget?: Record<string, unknown> } | undefined)?.budget : undefined);

describe("spend budgets", () => {
  it("never lets concurrent requests on one key reserve past its budget, and settles to the final charges", async () => {
    const { plan } = await byokInstance();
    const budget = keyBudget("key_conc", 100n);
    // 40 requests at once, each reserving 7: exactly 14 fit in 100.
    const results = await Promise.allSettled(
      Array.from({ length: 40 }, (_, i) =>
        openMeter({
          ctx: t.ctx,
          input: { plan: plan(7n), request: { requestId: `req_conc_${i}`, apiKeyId: "key_conc", idempotencyKey: null, stream: false, keyBudget: budget } },
        }),
      ),
    );
    const meters = results.flatMap((r) => (r.status === "fulfilled" ? [r.value] : []));
    const refused = results.flatMap((r) => (r.status === "rejected" ? [r.reason] : []));
    expect(meters).toHaveLength(14);
    for (const err of refused) {
      expect(err).toBeInstanceOf(AppError);
      expect((err as AppError).code).toBe("conflict");
      expect(budgetOf(err)).toMatchObject({ scope: "key", limit_units: 100, period: "day" });
    }
    // Refused requests wrote no record (they would have been refused before any provider call).
    expect(await t.ctx.prisma.usageRecord.count({ where: { id: { startsWith: "req_conc_" } } })).toBe(14);
    // Each costs 5 (5 input tokens at 1 unit each): the reservation is replaced by the charge.
    expect(await Promise.all(meters.map((m) => m.completed(usage(5n))))).toEqual(Array(14).fill(5n));
    const [view] = await viewBudgets({ ctx: t.ctx, input: { budgets: [budget] } });
    expect(view).toMatchObject({ limit_units: 100n, spent_units: 70n, reserved_units: 0n });
    // 30 left: four more of 7 fit, the fifth does not.
    const more = await Promise.allSettled(
      Array.from({ length: 5 }, (_, i) =>
        openMeter({
          ctx: t.ctx,
          input: { plan: plan(7n), request: { requestId: `req_more_${i}`, apiKeyId: "key_conc", idempotencyKey: null, stream: false, keyBudget: budget } },
        }),
      ),
    );
    expect(more.filter((r) => r.status === "fulfilled")).toHaveLength(4);
    const rows = await t.ctx.prisma.budgetCounter.findMany({ where: { scopeId: "key_conc" } });
    expect(rows[0]!.spentUnits + rows[0]!.reservedUnits).toBe(98n);
  });

  it("counts a request against its key's and its instance's budgets, all or none", async () => {
    const { id, plan } = await byokInstance({ units: 20n, period: "month" });
    const open = (rid: string, units: bigint, limit: bigint) =>
      openMeter({
        ctx: t.ctx,
        input: {
          plan: plan(units),
          request: { requestId: rid, apiKeyId: "key_both", idempotencyKey: null, stream: false, keyBudget: keyBudget("key_both", limit) },
        },
      });
    const first = await open("req_both_1", 15n, 1000n);
    // The instance has 5 left: refused by the instance, and the key's budget is untouched.
    const err = await open("req_both_2", 6n, 1000n).catch((e: unknown) => e);
    expect(budgetOf(err)).toMatchObject({ scope: "instance", limit_units: 20, spent_units: 0, period: "month" });
    const [key, inst] = await viewBudgets({
      ctx: t.ctx,
      input: { budgets: [keyBudget("key_both", 1000n), { scope: "instance", id, limitUnits: 20n, period: "month" }] },
    });
    expect(key).toMatchObject({ spent_units: 0n, reserved_units: 15n });
    expect(inst).toMatchObject({ spent_units: 0n, reserved_units: 15n });
    // A failed call gives the whole reservation back.
    await first.failed("upstream_error");
    const [after] = await viewBudgets({ ctx: t.ctx, input: { budgets: [keyBudget("key_both", 1000n)] } });
    expect(after).toMatchObject({ spent_units: 0n, reserved_units: 0n });
  });

  it("refuses at once when the budget is lowered below what is spent (and that is reached); a large request that does not fit is not", async () => {
    const { plan } = await byokInstance();
    const m = await openMeter({
      ctx: t.ctx,
      input: {
        plan: plan(10n),
        request: {
          requestId: "req_low_1",
          apiKeyId: "key_low",
          idempotencyKey: null,
          stream: false,
          keyBudget: keyBudget("key_low", 100n),
        },
      },
    });
    await m.completed(usage(8n));
    const reached = async () => (await t.outbox()).filter((e) => e.type === "budget.reached" && e.payload.scope_id === "key_low");
    await openMeter({
      ctx: t.ctx,
      input: {
        plan: plan(93n),
        request: {
          requestId: "req_low_big",
          apiKeyId: "key_low",
          idempotencyKey: null,
          stream: false,
          keyBudget: keyBudget("key_low", 100n),
        },
      },
    }).catch(() => undefined);
    expect(await reached()).toEqual([]);
    const err = await openMeter({
      ctx: t.ctx,
      input: {
        plan: plan(1n),
        request: {
          requestId: "req_low_2",
          apiKeyId: "key_low",
          idempotencyKey: null,
          stream: false,
          keyBudget: keyBudget("key_low", 5n),
        },
      },
    }).catch((e: unknown) => e);
    expect(budgetOf(err)).toMatchObject({ scope: "key", limit_units: 5, spent_units: 8 });
    expect((await reached()).map((e) => e.payload)).toEqual([expect.objectContaining({ limit_units: "5", spent_units: "8" })]);
  });

  it("starts again at the period boundary (clock injected)", async () => {
    const budget = keyBudget("key_reset", 10n);
    const reserve = (rid: string, now: Date) =>
      reserveBudgets({ ctx: t.ctx, input: { requestId: rid, tenantId: "ten_reset", budgets: [budget], units: 6n, now } });
    await reserve("req_reset_1", new Date("2026-05-31T23:59:59Z"));
    const err = await reserve("req_reset_2", new Date("2026-05-31T23:59:59.999Z")).catch((e: unknown) => e);
    expect(budgetOf(err)).toMatchObject({ spent_units: 0, resets_at: "2026-06-01T00:00:00.000Z" });
    await expect(reserve("req_reset_3", new Date("2026-06-01T00:00:00Z"))).resolves.toBeUndefined();
    const [may, june] = await Promise.all(
      [new Date("2026-05-31T12:00:00Z"), new Date("2026-06-01T12:00:00Z")].map(
        async (now) => (await viewBudgets({ ctx: t.ctx, input: { budgets: [budget], now } }))[0],
      ),
    );
    expect(may).toMatchObject({ reserved_units: 6n, resets_at: "2026-06-01T00:00:00.000Z" });
    expect(june).toMatchObject({ reserved_units: 6n, resets_at: "2026-06-02T00:00:00.000Z" });
  });

  it("audits 80 % and 100 % once per period", async () => {
    const { plan } = await byokInstance();
    const budget = keyBudget("key_audit", 10n);
    const spend = async (rid: string, tokens: bigint) =>
      (
        await openMeter({
          ctx: t.ctx,
          input: { plan: plan(tokens), request: { requestId: rid, apiKeyId: "key_audit", idempotencyKey: null, stream: false, keyBudget: budget } },
        })
      ).completed(usage(tokens));
    await spend("req_audit_1", 7n);
    const events = async () => (await t.outbox()).filter((e) => e.type.startsWith("budget.") && e.payload.scope_id === "key_audit");
    expect(await events()).toEqual([]);
    await spend("req_audit_2", 1n); // 8 of 10: 80 %
    await spend("req_audit_3", 1n);
    expect((await events()).map((e) => e.type)).toEqual(["budget.threshold"]);
    await spend("req_audit_4", 1n); // 10 of 10
    await openMeter({
      ctx: t.ctx,
      input: { plan: plan(1n), request: { requestId: "req_audit_5", apiKeyId: "key_audit", idempotencyKey: null, stream: false, keyBudget: budget } },
    }).catch(() => undefined);
    const all = await events();
    expect(all.map((e) => e.type)).toEqual(["budget.threshold", "budget.reached"]);
    expect(all[1]!.payload).toMatchObject({ scope: "key", limit_units: "10", spent_units: "10", period: "day" });
    // Each is told under the request whose charge crossed it.
    const rows = await t.ctx.prisma.outboxEvent.findMany({
      where: { type: { in: ["budget.threshold", "budget.reached"] }, payload: { path: ["scope_id"], equals: "key_audit" } },
      orderBy: { seq: "asc" },
    });
    expect(rows.map((r) => r.requestId)).toEqual(["req_audit_2", "req_audit_4"]);
  });

  it("keeps a review record's claim until its record ends, and releases orphans once (the sweep)", async () => {
    const { plan } = await byokInstance();
    const budget = keyBudget("key_sweep", 100n);
    const m = await openMeter({
      ctx: t.ctx,
      input: { plan: plan(9n), request: { requestId: "req_sweep_1", apiKeyId: "key_sweep", idempotencyKey: null, stream: false, keyBudget: budget } },
    });
    await m.review("usage_unavailable");
    // A claim whose record was never written (a crash between the two).
    await reserveBudgets({ ctx: t.ctx, input: { requestId: "req_sweep_orphan", tenantId: "ten_x", budgets: [budget], units: 4n } });
    expect(await sweepBudgetClaims({ ctx: t.ctx, input: {} })).toBe(0);
    expect((await viewBudgets({ ctx: t.ctx, input: { budgets: [budget] } }))[0]).toMatchObject({ reserved_units: 13n });
    // The operator ends the review; the orphan is old enough.
    await t.ctx.prisma.usageRecord.update({ where: { id: "req_sweep_1" }, data: { status: "failed", finalUnits: 0n } });
    expect(await sweepBudgetClaims({ ctx: t.ctx, input: { orphanAfterSeconds: 0 } })).toBeGreaterThan(0);
    expect((await viewBudgets({ ctx: t.ctx, input: { budgets: [budget] } }))[0]).toMatchObject({ spent_units: 0n, reserved_units: 0n });
    // Exactly once: settling again changes nothing.
    expect(await settleBudgets({ ctx: t.ctx, input: { requestIds: ["req_sweep_1", "req_sweep_orphan"], orphans: true } })).toBe(0);
  });

  it("records byok calls with their exact cost at the instance's pricing, never capped at the estimate", async () => {
    const { plan } = await byokInstance();
    const m = await openMeter({
      ctx: t.ctx,
      input: { plan: plan(3n), request: { requestId: "req_byok_rec", apiKeyId: "key_rec", idempotencyKey: "idem", stream: false } },
    });
    // 10 input at 1 unit + 4 output at 2 units = 18, above the estimate of 3.
    expect(await m.completed(usage(10n, 4n))).toBe(18n);
    const row = await t.ctx.prisma.usageRecord.findUniqueOrThrow({ where: { id: "req_byok_rec" } });
    expect(row).toMatchObject({ mode: "byok", status: "completed", finalUnits: 18n, errorCode: null, holdId: null, apiKeyId: "key_rec" });
    expect(JSON.parse(row.usageJson!)).toEqual({ prompt_tokens: 10, completion_tokens: 4 });
    // byok requests claim no Idempotency-Key (as before).
    expect(await t.ctx.prisma.idempotencyKey.count()).toBe(0);
  });

  it("never lets byok calls pass their budget, even when each reports more than its estimate and they run at once", async () => {
    // 11 calls of 9 units each fit a budget of 100 at once (99 reserved: a 12th is refused, 409);
    // each then reports 10 input + 4 output = 18 units, twice its estimate.
    const { plan } = await byokInstance({ units: 100n, period: "day" });
    const budget = keyBudget("key_byok_conc", 100n);
    const opened = await Promise.allSettled(
      Array.from({ length: 12 }, (_, i) =>
        openMeter({
          ctx: t.ctx,
          input: {
            plan: plan(9n),
            request: { requestId: `req_byok_conc_${i}`, apiKeyId: "key_byok_conc", idempotencyKey: null, stream: false, keyBudget: budget },
          },
        }),
      ),
    );
    const meters = opened.flatMap((o) => (o.status === "fulfilled" ? [o.value] : []));
    const refused = opened.flatMap((o) => (o.status === "rejected" ? [o.reason as unknown] : []));
    expect(meters).toHaveLength(11);
    expect(refused).toHaveLength(1);
    expect(refused[0]).toMatchObject({ code: "conflict" });
    const charges = await Promise.all(meters.map((m) => m.completed(usage(10n, 4n))));
    // The records keep the exact estimate at the customer's prices (the cost headers say the same) ...
    expect(charges.every((c) => c === 18n)).toBe(true);
    // ... while the budgets count at most what each call reserved: never past their limits.
    const views = await viewBudgets({
      ctx: t.ctx,
      input: { budgets: [budget, { scope: "instance", id: plan(0n).upstream.id, limitUnits: 100n, period: "day" }] },
    });
    for (const v of views) {
      expect(v.reserved_units).toBe(0n);
      expect(v.spent_units).toBeLessThanOrEqual(100n);
    }
    expect(views[0]!.spent_units).toBe(99n);
  });

  it("settles another service's claims (push) only at the charge it is given, once, and never from the sweep", async () => {
    const budget = keyBudget("key_push", 10n);
    await reserveBudgets({ ctx: t.ctx, input: { requestId: "push_1", tenantId: "ten_p", budgets: [budget], units: 6n, source: "push" } });
    // No usage record exists for a push message: the sweep must not take it for an orphan.
    expect(await sweepBudgetClaims({ ctx: t.ctx, input: { orphanAfterSeconds: 0 } })).toBe(0);
    expect(await settleBudgets({ ctx: t.ctx, input: { requestIds: ["push_1"], orphans: true } })).toBe(0);
    expect((await viewBudgets({ ctx: t.ctx, input: { budgets: [budget] } }))[0]).toMatchObject({ spent_units: 0n, reserved_units: 6n });
    expect(await settleBudgetClaims({ ctx: t.ctx, input: { requestId: "push_1", finalUnits: 4n } })).toBe(1);
    expect(await settleBudgetClaims({ ctx: t.ctx, input: { requestId: "push_1", finalUnits: 6n } })).toBe(0);
    expect((await viewBudgets({ ctx: t.ctx, input: { budgets: [budget] } }))[0]).toMatchObject({ spent_units: 4n, reserved_units: 0n });
  });

  it("lets an operator release a byok record in review without touching the ledger, and the sweep then frees its budget", async () => {
    const { plan } = await byokInstance();
    const budget = keyBudget("key_rel", 50n);
    const m = await openMeter({
      ctx: t.ctx,
      input: { plan: plan(12n), request: { requestId: "req_rel", apiKeyId: "key_rel", idempotencyKey: null, stream: true, keyBudget: budget } },
    });
    await m.review("usage_unavailable");
    // The test context's ledger answers nothing: a ledger call would fail this release.
    expect(await releaseUsage({ ctx: t.ctx, input: { actor: "user:op", id: "req_rel", reason: "stream cut, customer's provider" } })).toEqual({
      id: "req_rel",
      status: "failed",
      refunded: 0n,
    });
    await sweepBudgetClaims({ ctx: t.ctx, input: {} });
    expect((await viewBudgets({ ctx: t.ctx, input: { budgets: [budget] } }))[0]).toMatchObject({ spent_units: 0n, reserved_units: 0n });
  });

  it("reserves concurrent requests in batches, each all or none, later ones seeing earlier ones of the same batch", async () => {
    let statements = 0;
    const sql = {
      query: <R>(text: string, values: unknown[]) => {
        statements++;
        return t.ctx.sql.query<R>(text, values);
      },
      eventsWritten: () => undefined,
    };
    const writer = new BudgetReservations(sql);
    const now = new Date();
    const key = keyBudget("key_batch", 50n);
    const inst: Budget = { scope: "instance", id: "inst_batch", limitUnits: 1_000n, period: "month" };
    const counters = [key, inst].map((b) => ({ ...b, periodStart: periodBounds(b.period, now).start }));
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => writer.reserve({ requestId: `req_batch_${i}`, tenantId: "ten_batch", counters, units: 7n, source: "ai" })),
    );
    expect(results.filter((r) => r === null)).toHaveLength(7); // 7 × 7 = 49 of 50
    expect(results.filter((r) => r !== null).every((r) => r!.index === 0 && r!.spentUnits === 0n && r!.reservedUnits === 49n)).toBe(true);
    expect(statements).toBeLessThan(20);
    const [k, i] = await viewBudgets({ ctx: t.ctx, input: { budgets: [key, inst] } });
    expect(k).toMatchObject({ reserved_units: 49n });
    expect(i).toMatchObject({ reserved_units: 49n }); // refused requests held nothing on the instance either
    // A replay of a reserved request changes nothing and is not refused.
    expect(await writer.reserve({ requestId: "req_batch_0", tenantId: "ten_batch", counters, units: 7n, source: "ai" })).toBeNull();
    expect((await viewBudgets({ ctx: t.ctx, input: { budgets: [key] } }))[0]).toMatchObject({ reserved_units: 49n });
  });
});
