import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openTestLedger, type TestLedger } from "../../testing/ledger-database.js";
import { createCredit } from "../credit/create.js";
import { captureHold } from "../hold/capture.js";
import { reserveHold } from "../hold/reserve.js";
import { voidHold } from "../hold/void.js";
import { checkInvariant } from "./check.js";

let ledger: TestLedger;
beforeAll(async () => {
  ledger = await openTestLedger();
  const ctx = ledger.ctx;
  for (const t of ["i1", "i2"]) {
    await createCredit({ ctx, input: { operation_id: `${t}:credit`, tenant_id: t, units: "1000", reason: "funds" } });
    const a = await reserveHold({ ctx, input: { operation_id: `${t}:a`, tenant_id: t, units: "300", ttl_seconds: 60 } });
    const b = await reserveHold({ ctx, input: { operation_id: `${t}:b`, tenant_id: t, units: "200", ttl_seconds: 60 } });
    await reserveHold({ ctx, input: { operation_id: `${t}:c`, tenant_id: t, units: "100", ttl_seconds: 60 } });
    await captureHold({ ctx, input: { operation_id: `${t}:cap`, hold_id: a.holdId, units: "250" } });
    await voidHold({ ctx, input: { operation_id: `${t}:void`, hold_id: b.holdId } });
  }
});
afterAll(async () => {
  await ledger?.close();
});

describe("checkInvariant", () => {
  it("reconciles every tenant: credits − captured = available + held, from independent records", async () => {
    const report = await checkInvariant({ ctx: ledger.ctx, input: {} });
    expect(report).toMatchObject({ ok: true, journalSum: 0n, unbalancedTransfers: 0n });
    expect(report.tenants.map((t) => t.tenantId)).toEqual(["i1", "i2"]);
    expect(report.tenants[0]).toEqual({
      tenantId: "i1",
      credits: 1000n,
      captured: 250n,
      available: 650n,
      held: 100n,
      journalAvailable: 650n,
      journalHeld: 100n,
      journalFunding: -1000n,
      journalRevenue: 250n,
      openHolds: 100n,
      ok: true,
    });
    const one = await checkInvariant({ ctx: ledger.ctx, input: { tenant_id: "i2" } });
    expect(one.tenants.map((t) => t.tenantId)).toEqual(["i2"]);
    expect(one.ok).toBe(true);
    expect((await checkInvariant({ ctx: ledger.ctx, input: { tenant_id: "nobody" } })).tenants).toEqual([]);
  });

  it("notices a running balance that disagrees with the journal", async () => {
    await ledger.sql("UPDATE accounts SET available = available + 1 WHERE tenant_id = 'i2'");
    try {
      const report = await checkInvariant({ ctx: ledger.ctx, input: {} });
      expect(report.ok).toBe(false);
      expect(report.tenants.find((t) => t.tenantId === "i2")).toMatchObject({ ok: false, available: 651n, journalAvailable: 650n });
      expect(report.tenants.find((t) => t.tenantId === "i1")!.ok).toBe(true);
    } finally {
      await ledger.sql("UPDATE accounts SET available = available - 1 WHERE tenant_id = 'i2'");
    }
    expect((await checkInvariant({ ctx: ledger.ctx, input: {} })).ok).toBe(true);
  });
});

describe("the database's own defences", () => {
  const fails = (text: string, why: RegExp) => expect(ledger.sql(text)).rejects.toThrow(why);

  it("refuses negative balances", async () => {
    await fails("UPDATE accounts SET available = -1 WHERE tenant_id = 'i1'", /accounts_available_nonnegative/);
    await fails("UPDATE accounts SET held = held - 101 WHERE tenant_id = 'i1'", /accounts_held_nonnegative/);
  });

  it("keeps the journal append-only", async () => {
    await fails("UPDATE transfers SET units = units + 1 WHERE operation_id = 'i1:credit'", /transfers is append-only/);
    await fails("DELETE FROM transfers WHERE operation_id = 'i1:credit'", /transfers is append-only/);
    await fails("UPDATE entries SET units = units + 1", /entries is append-only/);
    await fails("DELETE FROM entries", /entries is append-only/);
  });

  it("refuses an unbalanced transfer at commit", async () => {
    await expect(
      ledger.ctx.prisma.$transaction(async (tx) => {
        await tx.$executeRawUnsafe(
          `INSERT INTO transfers (id, operation_id, request_hash, kind, tenant_id, units, available_after, held_after)
           VALUES ('trf_bad', 'bad', 'x', 'credit', 'i1', 5, 0, 0)`,
        );
        await tx.$executeRawUnsafe("INSERT INTO entries (transfer_id, leg, account, units) VALUES ('trf_bad', 0, 'funding', -5), ('trf_bad', 1, 'available', 4)");
      }),
    ).rejects.toThrow(/trf_bad does not balance/);
    expect(await ledger.sql("SELECT 1 FROM transfers WHERE id = 'trf_bad'")).toEqual([]);
  });

  it("settles a hold once and never deletes one", async () => {
    const [captured] = await ledger.sql<{ id: string }>("SELECT id FROM holds WHERE status = 'captured' LIMIT 1");
    await fails(`UPDATE holds SET status = 'voided' WHERE id = '${captured!.id}'`, /is captured and cannot become voided/);
    await fails(`UPDATE holds SET status = 'open', settled_by = NULL, settled_at = NULL, captured_units = NULL WHERE id = '${captured!.id}'`, /cannot become open/);
    const [open] = await ledger.sql<{ id: string }>("SELECT id FROM holds WHERE status = 'open' LIMIT 1");
    await fails(`UPDATE holds SET units = units + 1 WHERE id = '${open!.id}'`, /cannot become/);
    await fails(`DELETE FROM holds WHERE id = '${open!.id}'`, /never deleted/);
    expect((await checkInvariant({ ctx: ledger.ctx, input: {} })).ok).toBe(true);
  });
});
