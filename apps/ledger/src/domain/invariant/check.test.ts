import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openTestLedger, type TestLedger } from "../../testing/ledger-database.js";
import { createCredit } from "../credit/create.js";
import { captureHold } from "../hold/capture.js";
import { reserveHold } from "../hold/reserve.js";
import { voidHold } from "../hold/void.js";
import { postAllotment } from "../allotment/post.js";
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
    const report = await checkInvariant({ ctx: ledger.ctx, input: { all_tenants: true } });
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
      badAllotments: 0n,
      ok: true,
    });
    const one = await checkInvariant({ ctx: ledger.ctx, input: { tenant_id: "i2" } });
    expect(one.tenants.map((t) => t.tenantId)).toEqual(["i2"]);
    expect(one.ok).toBe(true);
    expect((await checkInvariant({ ctx: ledger.ctx, input: { tenant_id: "nobody" } })).tenants).toEqual([]);
  });

  it("needs a tenant, or every tenant asked for explicitly: an empty tenant id alone never means everyone", async () => {
    await expect(checkInvariant({ ctx: ledger.ctx, input: {} })).rejects.toMatchObject({ code: "invalid_request" });
    await expect(checkInvariant({ ctx: ledger.ctx, input: { tenant_id: "" } })).rejects.toMatchObject({ code: "invalid_request" });
    await expect(checkInvariant({ ctx: ledger.ctx, input: { tenant_id: "i1", all_tenants: true } })).rejects.toMatchObject({ code: "invalid_request" });
  });

  it("notices a running balance that disagrees with the journal", async () => {
    // Consistent with the account's own CHECKs (available = credits posted − debits), not with the transfers.
    await ledger.sql("UPDATE accounts SET available = available + 1, credits_posted = credits_posted + 1 WHERE tenant_id = 'i2'");
    try {
      const report = await checkInvariant({ ctx: ledger.ctx, input: { all_tenants: true } });
      expect(report.ok).toBe(false);
      expect(report.tenants.find((t) => t.tenantId === "i2")).toMatchObject({ ok: false, available: 651n, journalAvailable: 650n });
      expect(report.tenants.find((t) => t.tenantId === "i1")!.ok).toBe(true);
    } finally {
      await ledger.sql("UPDATE accounts SET available = available - 1, credits_posted = credits_posted - 1 WHERE tenant_id = 'i2'");
    }
    expect((await checkInvariant({ ctx: ledger.ctx, input: { all_tenants: true } })).ok).toBe(true);
  });
});

describe("the database's own defences", () => {
  const fails = (text: string, why: RegExp) => expect(ledger.sql(text)).rejects.toThrow(why);

  it("refuses negative balances, and balances that disagree with the account's pending/posted debits and credits", async () => {
    await fails("UPDATE accounts SET available = -1 WHERE tenant_id = 'i1'", /accounts_available_nonnegative|accounts_tb_derived/);
    await fails(
      "UPDATE accounts SET held = held - 101, debits_pending = debits_pending - 101 WHERE tenant_id = 'i1'",
      /accounts_held_nonnegative|accounts_tb_nonnegative/,
    );
    await fails("UPDATE accounts SET available = available + 1 WHERE tenant_id = 'i1'", /accounts_tb_derived/);
    await fails("UPDATE accounts SET held = held + 1 WHERE tenant_id = 'i1'", /accounts_tb_derived/);
  });

  it("keeps the journal append-only; legs and holds are views of it, never written", async () => {
    await fails("UPDATE transfers SET units = units + 1 WHERE operation_id = 'i1:credit'", /transfers is append-only/);
    await fails("DELETE FROM transfers WHERE operation_id = 'i1:credit'", /transfers is append-only/);
    await fails("UPDATE entries SET units = units + 1", /cannot update view "entries"/);
    await fails("DELETE FROM entries", /cannot delete from view "entries"/);
  });

  /** A transfer row as the movement functions write it, with some columns overridden. */
  const insert = (over: Record<string, string>) => {
    const row: Record<string, string> = {
      id: "'trf_bad'",
      seq: "(SELECT max(seq) + 1 FROM transfers)",
      operation_id: "'bad'",
      request_hash: "'x'",
      kind: "'void'",
      tenant_id: "'i1'",
      units: "100",
      hold_id: "NULL",
      reason: "''",
      available_after: "0",
      held_after: "0",
      pending_units: "100",
      expires_at: "NULL",
      debit_account: "'held'",
      credit_account: "'available'",
      event_id: "'evt_bad'",
      ...over,
    };
    return `INSERT INTO transfers (${Object.keys(row).join(", ")}) VALUES (${Object.values(row).join(", ")})`;
  };

  it("refuses a settlement that does not match its pending transfer, a second settlement of a hold, and a seq taken twice", async () => {
    const [open] = await ledger.sql<{ id: string }>("SELECT id FROM holds WHERE tenant_id = 'i1' AND status = 'open' LIMIT 1");
    const [captured] = await ledger.sql<{ id: string; units: bigint }>("SELECT id, units FROM holds WHERE tenant_id = 'i1' AND status = 'captured' LIMIT 1");
    // The open hold is 100 units: releasing 99 of them, or one of another tenant, does not match it.
    await fails(insert({ hold_id: `'${open!.id}'`, units: "99", pending_units: "99" }), /does not match its pending transfer/);
    await fails(insert({ hold_id: `'${open!.id}'`, tenant_id: "'i2'" }), /does not match its pending transfer/);
    await fails(insert({ hold_id: "'hold_nope'" }), /does not match its pending transfer/);
    // A capture above its hold, a void that is not the whole hold, accounts that are not the kind's.
    await fails(insert({ hold_id: `'${open!.id}'`, kind: "'capture'", credit_account: "'revenue'", units: "101" }), /transfers_pending_valid/);
    await fails(insert({ hold_id: `'${open!.id}'`, units: "50" }), /transfers_pending_valid/);
    await fails(insert({ hold_id: `'${open!.id}'`, credit_account: "'revenue'" }), /transfers_accounts_valid/);
    // A hold settles once.
    await fails(insert({ hold_id: `'${captured!.id}'`, units: String(captured!.units), pending_units: String(captured!.units) }), /transfers_settlement_key/);
    // One position per row in the log the relay tails.
    await fails(insert({ hold_id: `'${open!.id}'`, seq: "(SELECT max(seq) FROM transfers)" }), /transfers_seq_key/);
    expect(await ledger.sql("SELECT 1 FROM transfers WHERE id = 'trf_bad'")).toEqual([]);
    expect((await checkInvariant({ ctx: ledger.ctx, input: { all_tenants: true } })).ok).toBe(true);
  });

  it("never lets a hold be changed or deleted: it is a view of its transfers", async () => {
    const [captured] = await ledger.sql<{ id: string }>("SELECT id FROM holds WHERE status = 'captured' LIMIT 1");
    await fails(`UPDATE holds SET status = 'voided' WHERE id = '${captured!.id}'`, /cannot update view "holds"/);
    const [open] = await ledger.sql<{ id: string }>("SELECT id FROM holds WHERE status = 'open' LIMIT 1");
    await fails(`DELETE FROM holds WHERE id = '${open!.id}'`, /cannot delete from view "holds"/);
    expect((await checkInvariant({ ctx: ledger.ctx, input: { all_tenants: true } })).ok).toBe(true);
  });

  it("keeps an allotment's posts within it, on it alone, and its totals equal to its transfers", async () => {
    const ctx = ledger.ctx;
    await createCredit({ ctx, input: { operation_id: "i3:credit", tenant_id: "i3", units: "1000", reason: "funds" } });
    const a = await reserveHold({ ctx, input: { operation_id: "i3:a", tenant_id: "i3", units: "300", ttl_seconds: 60, allotment: true } });
    await postAllotment({ ctx, input: { operation_id: "i3:p", hold_id: a.holdId, units: "100" } });
    const [plain] = await ledger.sql<{ id: string }>("SELECT id FROM holds WHERE tenant_id = 'i1' AND status = 'open' LIMIT 1");
    const post = (over: Record<string, string>) =>
      insert({ kind: "'post'", tenant_id: "'i3'", hold_id: `'${a.holdId}'`, units: "10", pending_units: "NULL", credit_account: "'revenue'", ...over });
    // A post names an allotment of its tenant, has no pending units, moves something, and goes to revenue.
    await fails(post({ hold_id: `'${plain!.id}'`, tenant_id: "'i1'" }), /does not draw on an open allotment/);
    await fails(post({ tenant_id: "'i1'" }), /does not draw on an open allotment/);
    await fails(post({ pending_units: "10" }), /transfers_pending_valid/);
    await fails(post({ units: "0" }), /transfers_pending_valid/);
    await fails(post({ credit_account: "'available'" }), /transfers_accounts_valid/);
    // An allotment is never captured, and its void settles exactly what is left (200).
    await fails(
      insert({ kind: "'capture'", tenant_id: "'i3'", hold_id: `'${a.holdId}'`, credit_account: "'revenue'", units: "300", pending_units: "300" }),
      /not a void of what is left/,
    );
    await fails(insert({ tenant_id: "'i3'", hold_id: `'${a.holdId}'`, units: "300", pending_units: "300" }), /not a void of what is left/);
    // Its running totals stay within it.
    await fails(`UPDATE allotments SET posted = 301 WHERE hold_id = '${a.holdId}'`, /allotments_totals_valid/);
    expect((await checkInvariant({ ctx, input: { tenant_id: "i3" } })).ok).toBe(true);
    // Totals that disagree with the transfers are noticed.
    await ledger.sql(`UPDATE allotments SET posted = 99 WHERE hold_id = '${a.holdId}'`);
    try {
      expect((await checkInvariant({ ctx, input: { tenant_id: "i3" } })).tenants[0]).toMatchObject({
        ok: false,
        badAllotments: 1n,
        captured: 100n,
        openHolds: 200n,
      });
    } finally {
      await ledger.sql(`UPDATE allotments SET posted = 100 WHERE hold_id = '${a.holdId}'`);
    }
    expect((await checkInvariant({ ctx, input: { tenant_id: "i3" } })).tenants[0]).toMatchObject({ ok: true, captured: 100n, openHolds: 200n, held: 200n });
  });
});
