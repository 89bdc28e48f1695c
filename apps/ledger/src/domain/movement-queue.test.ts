import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { newId } from "@gateway/contract/ids";
import { createLogger } from "@gateway/logger";
import type { LedgerContext } from "./context.js";
import { ledgerPerFile } from "../testing/ledger-per-file.js";
import { getBalance } from "./balance/get.js";
import { createCredit } from "./credit/create.js";
import { captureHold } from "./hold/capture.js";
import { reserveHold } from "./hold/reserve.js";
import { voidHold } from "./hold/void.js";
import { checkInvariant } from "./invariant/check.js";
import { MovementQueue, type MovementRow, type QueuedMovement } from "./movement-queue.js";

const ledger = ledgerPerFile({ poolSize: 12 });

/** A context whose queue counts its statements (and may be told to fail some). */
function countingContext(options: { concurrency?: number; failWhen?: (movements: number) => boolean } = {}) {
  const statements: number[] = [];
  const logged: string[] = [];
  let kicks = 0;
  const movements = new MovementQueue({
    query: async (text, values) => {
      const size = (values[0] as unknown[]).length;
      statements.push(size);
      if (options.failWhen?.(size)) throw new Error("statement failed on purpose");
      return { rows: (await ledger.ctx.pool.query(text, values)).rows as MovementRow[] };
    },
    relay: { kick: () => void kicks++ },
    logger: createLogger({
      service: "ledger-test",
      level: "warn",
      destination: new Writable({
        write(chunk, _enc, cb) {
          logged.push(String(chunk));
          cb();
        },
      }),
    }),
    ...(options.concurrency ? { concurrency: options.concurrency } : {}),
  });
  const ctx: LedgerContext = { ...ledger.ctx, movements };
  return { ctx, statements, logged, kicks: () => kicks };
}

let n = 0;
const fund = (tenant: string, units: number) =>
  createCredit({ ctx: ledger.ctx, input: { operation_id: `fund-${++n}`, tenant_id: tenant, units: String(units), reason: "funds" } });
const reserve = (ctx: LedgerContext, tenant: string, units: number) =>
  reserveHold({ ctx, input: { operation_id: `res-${++n}`, tenant_id: tenant, units: String(units), ttl_seconds: 900 } });
const balance = (tenant: string) => getBalance({ ctx: ledger.ctx, input: { tenant_id: tenant } });
const invariantOk = async (tenant: string) => (await checkInvariant({ ctx: ledger.ctx, input: { tenant_id: tenant } })).ok;

describe("MovementQueue (group commit)", () => {
  it("commits concurrent movements together: fewer statements than movements, every result its own", async () => {
    const { ctx, statements, kicks } = countingContext({ concurrency: 1 });
    await fund("gq1", 10_000);
    const holds = await Promise.all(Array.from({ length: 40 }, () => reserve(ctx, "gq1", 100)));
    expect(new Set(holds.map((h) => h.holdId)).size).toBe(40);
    expect(statements.reduce((a, b) => a + b, 0)).toBe(40);
    expect(statements.length).toBeLessThan(40);
    expect(Math.max(...statements)).toBeGreaterThan(1);
    expect(kicks()).toBe(statements.length);
    // Each result is the balance right after its own movement: all different, ending at 6000.
    expect(new Set(holds.map((h) => h.balance.available)).size).toBe(40);
    expect(holds.map((h) => h.balance.available).sort((a, b) => Number(a - b))[0]).toBe(6_000n);

    const settled = await Promise.all(
      holds.map((h, i) =>
        i % 2 === 0
          ? captureHold({ ctx, input: { operation_id: `cap-${h.holdId}`, hold_id: h.holdId, units: "30" } })
          : voidHold({ ctx, input: { operation_id: `void-${h.holdId}`, hold_id: h.holdId } }),
      ),
    );
    expect(settled.every((s) => !s.replayed)).toBe(true);
    expect(await balance("gq1")).toEqual({ tenantId: "gq1", available: 10_000n - 20n * 30n, held: 0n });
    expect(await invariantOk("gq1")).toBe(true);
  });

  it("decides each movement of a batch on its own: a refusal among successes moves nothing for it", async () => {
    const { ctx, statements } = countingContext({ concurrency: 1 });
    await fund("gq2", 250);
    const results = await Promise.allSettled(Array.from({ length: 5 }, () => reserve(ctx, "gq2", 100)));
    expect(statements.length).toBeLessThan(5);
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(2);
    const refused = results.filter((r): r is PromiseRejectedResult => r.status === "rejected");
    expect(refused).toHaveLength(3);
    for (const r of refused) expect(r.reason).toMatchObject({ code: "insufficient_balance" });
    expect(await balance("gq2")).toEqual({ tenantId: "gq2", available: 50n, held: 200n });
    expect(await ledger.sql("SELECT count(*)::int AS n FROM transfers WHERE tenant_id = 'gq2' AND kind = 'reserve'")).toEqual([{ n: 2 }]);
    expect(await invariantOk("gq2")).toBe(true);
  });

  it("retries a failed batch one movement at a time: the others commit, the failure belongs to its movement", async () => {
    const { ctx, statements, logged } = countingContext({ concurrency: 1, failWhen: (size) => size > 1 });
    await fund("gq3", 1_000);
    const broken: QueuedMovement = {
      kind: "reserve",
      operationId: "broken",
      hash: "x",
      tenantId: "gq3\u0000", // PostgreSQL refuses a NUL in text: the statement fails
      units: 1n,
      expiresAt: null,
      ttlSeconds: 60,
      reason: "",
      newHoldId: newId("hold"),
      allotment: false,
      from: null,
      transferId: newId("trf"),
      eventId: newId("evt"),
      requestId: null,
    };
    const blocker = reserve(ctx, "gq3", 1); // occupies the only slot, so the rest queue into one batch
    const rest = [reserve(ctx, "gq3", 10), ctx.movements.run(broken), reserve(ctx, "gq3", 20)];
    const settledRest = await Promise.allSettled(rest);
    await blocker;
    expect(statements).toEqual([1, 3, 1, 1, 1]);
    expect(settledRest.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect(String((settledRest[1] as PromiseRejectedResult).reason)).toMatch(/0x00|invalid byte/i);
    expect(logged.some((l) => l.includes("applying its movements one by one"))).toBe(true);
    expect(await balance("gq3")).toEqual({ tenantId: "gq3", available: 969n, held: 31n });
    expect(await invariantOk("gq3")).toBe(true);
  });

  it("two queues (two replicas) mixing tenants and settlements never deadlock; the journal balances", async () => {
    const a = countingContext({ concurrency: 4 });
    const b = countingContext({ concurrency: 4 });
    const tenants = ["gq4a", "gq4b", "gq4c"];
    for (const t of tenants) await fund(t, 100_000);
    const opened = await Promise.all(Array.from({ length: 60 }, (_, i) => reserve(i % 2 ? a.ctx : b.ctx, tenants[i % 3]!, 100)));
    // Settlements of existing holds and new reservations, across tenants, from both queues at once.
    const work = [
      ...opened.map((h, i) => captureHold({ ctx: i % 2 ? b.ctx : a.ctx, input: { operation_id: `c4-${h.holdId}`, hold_id: h.holdId, units: "7" } })),
      ...Array.from({ length: 60 }, (_, i) => reserve(i % 2 ? a.ctx : b.ctx, tenants[(i * 7) % 3]!, 50)),
    ].sort(() => Math.random() - 0.5);
    const results = await Promise.allSettled(work);
    expect(results.filter((r) => r.status === "rejected")).toEqual([]);
    for (const t of tenants) {
      const bal = await balance(t);
      expect(bal.held).toBe(20n * 50n);
      expect(bal.available).toBe(100_000n - 20n * 7n - 20n * 50n);
      expect(await invariantOk(t)).toBe(true);
    }
  });
});
