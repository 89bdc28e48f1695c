import { describe, expect, it } from "vitest";
import { runWithContext } from "@gateway/logger";
import { ledgerPerFile } from "../../testing/ledger-per-file.js";
import { getBalance } from "../balance/get.js";
import { createCredit } from "./create.js";

const ledger = ledgerPerFile();

const credit = (input: Partial<Parameters<typeof createCredit>[0]["input"]> & { tenant_id: string }) =>
  createCredit({ ctx: ledger.ctx, input: { operation_id: `op-${Math.random()}`, units: "100", reason: "top-up", ...input } });

describe("createCredit", () => {
  it("moves funding → available in one balanced transfer and emits ledger.credited", async () => {
    const result = await runWithContext({ requestId: "req_credit1" }, () =>
      credit({ operation_id: "credit:t1:a", tenant_id: "t1", units: "12345", reason: "first top-up" }),
    );
    expect(result).toMatchObject({ replayed: false, balance: { tenantId: "t1", available: 12_345n, held: 0n } });
    expect(result.entryId).toMatch(/^trf_[0-9A-Z]{26}$/);
    expect(await ledger.legs(result.entryId)).toEqual([
      { account: "funding", units: -12_345n },
      { account: "available", units: 12_345n },
    ]);
    const [event] = await ledger.sql<{ type: string; payload: unknown; request_id: string }>(
      "SELECT type, payload, request_id FROM ledger_events WHERE payload->>'entry_id' = $1",
      result.entryId,
    );
    expect(event).toEqual({
      type: "ledger.credited",
      request_id: "req_credit1",
      payload: { tenant_id: "t1", entry_id: result.entryId, operation_id: "credit:t1:a", units: "12345", available_units: "12345", reason: "first top-up" },
    });
    expect(await getBalance({ ctx: ledger.ctx, input: { tenant_id: "t1" } })).toEqual({ tenantId: "t1", available: 12_345n, held: 0n });
  });

  it("keeps exact int64 amounts beyond 2^53", async () => {
    const big = "9007199254740993";
    const result = await credit({ tenant_id: "t-big", units: big });
    expect(result.balance.available).toBe(9_007_199_254_740_993n);
  });

  it("returns the first result for a retry and credits once, also for concurrent retries", async () => {
    const first = await credit({ operation_id: "credit:t2:k", tenant_id: "t2", units: "700" });
    await credit({ tenant_id: "t2", units: "5" });
    const retries = await Promise.all(Array.from({ length: 10 }, () => credit({ operation_id: "credit:t2:k", tenant_id: "t2", units: "700" })));
    for (const r of retries) expect(r).toEqual({ ...first, replayed: true });
    expect((await getBalance({ ctx: ledger.ctx, input: { tenant_id: "t2" } })).available).toBe(705n);

    const racers = await Promise.all(Array.from({ length: 10 }, () => credit({ operation_id: "credit:t3:race", tenant_id: "t3", units: "50" })));
    expect(racers.filter((r) => !r.replayed)).toHaveLength(1);
    expect(new Set(racers.map((r) => r.entryId)).size).toBe(1);
    expect((await getBalance({ ctx: ledger.ctx, input: { tenant_id: "t3" } })).available).toBe(50n);
    expect(await ledger.events("ledger.credited").then((e) => e.filter((x) => x.payload.tenant_id === "t3"))).toHaveLength(1);
  });

  it("refuses the same operation id with other parameters: conflict, nothing moved", async () => {
    await credit({ operation_id: "credit:t4:k", tenant_id: "t4", units: "10", reason: "r" });
    for (const other of [
      { units: "11", reason: "r", tenant_id: "t4" },
      { units: "10", reason: "other", tenant_id: "t4" },
      { units: "10", reason: "r", tenant_id: "t5" },
    ]) {
      await expect(credit({ operation_id: "credit:t4:k", ...other })).rejects.toMatchObject({ code: "conflict" });
    }
    expect((await getBalance({ ctx: ledger.ctx, input: { tenant_id: "t4" } })).available).toBe(10n);
    expect((await getBalance({ ctx: ledger.ctx, input: { tenant_id: "t5" } })).available).toBe(0n);
  });

  it("wakes the outbox relay once per committed movement, never for a replay or a refusal", async () => {
    const before = ledger.kicks();
    await credit({ operation_id: "credit:t7:k", tenant_id: "t7", units: "10" });
    expect(ledger.kicks()).toBe(before + 1);
    await credit({ operation_id: "credit:t7:k", tenant_id: "t7", units: "10" });
    await expect(credit({ operation_id: "credit:t7:k", tenant_id: "t7", units: "11" })).rejects.toMatchObject({ code: "conflict" });
    expect(ledger.kicks()).toBe(before + 1);
  });

  it("rejects invalid input with invalid_request", async () => {
    for (const bad of [
      { tenant_id: "t6", units: "0" },
      { tenant_id: "t6", units: "-5" },
      { tenant_id: "t6", units: "1.5" },
      { tenant_id: "t6", units: "99999999999999999999" },
      { tenant_id: "t6", reason: "" },
      { tenant_id: "t6", reason: "x".repeat(241) },
      { tenant_id: "bad tenant" },
      { tenant_id: "t6", operation_id: "" },
      { tenant_id: "t6", operation_id: "has space" },
    ]) {
      await expect(credit(bad)).rejects.toMatchObject({ code: "invalid_request" });
    }
    expect(await ledger.sql("SELECT 1 FROM transfers WHERE tenant_id = 't6'")).toEqual([]);
  });
});
