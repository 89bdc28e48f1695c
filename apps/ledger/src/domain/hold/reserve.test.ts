import { describe, expect, it } from "vitest";
import { ledgerPerFile } from "../../testing/ledger-per-file.js";
import { movedFields, testMoves } from "../../testing/test-moves.js";
import { getBalance } from "../balance/get.js";
import { captureHold } from "./capture.js";
import { getHold } from "./get.js";

const ledger = ledgerPerFile();

const { fund, reserve } = testMoves(ledger);
const balance = (tenant: string) => getBalance({ ctx: ledger.ctx, input: { tenant_id: tenant } });
const counts = async (tenant: string) => {
  const [row] = await ledger.sql<{ transfers: number; holds: number; events: number }>(
    `SELECT (SELECT count(*)::int FROM transfers WHERE tenant_id = $1) AS transfers,
            (SELECT count(*)::int FROM holds WHERE tenant_id = $1) AS holds,
            (SELECT count(*)::int FROM ledger_events WHERE payload->>'tenant_id' = $1) AS events`,
    tenant,
  );
  return row!;
};

describe("reserveHold", () => {
  it("moves available → held under an open hold with an expiry from the database clock, and emits ledger.reserved", async () => {
    await fund("r1", 1_000);
    const before = Date.now();
    const r = await reserve({ operation_id: "reserve:r1:1", tenant_id: "r1", units: "300", ttl_seconds: 900 });
    expect(r).toMatchObject({ replayed: false, units: 300n, balance: { tenantId: "r1", available: 700n, held: 300n } });
    expect(r.holdId).toMatch(/^hold_[0-9A-Z]{26}$/);
    expect(r.expiresAt.getTime()).toBeGreaterThanOrEqual(before + 900_000 - 5_000);
    expect(r.expiresAt.getTime()).toBeLessThanOrEqual(Date.now() + 900_000 + 5_000);
    expect(await balance("r1")).toEqual({ tenantId: "r1", available: 700n, held: 300n });

    const hold = await getHold({ ctx: ledger.ctx, input: { hold_id: r.holdId } });
    expect(hold).toMatchObject({ holdId: r.holdId, tenantId: "r1", units: 300n, status: "open", capturedUnits: 0n, releasedUnits: 0n, settledAt: null });
    expect(hold.expiresAt).toEqual(r.expiresAt);

    expect(await ledger.legs(r.entryId)).toEqual([
      { account: "available", units: -300n },
      { account: "held", units: 300n },
    ]);
    const [event] = await ledger.events("ledger.reserved");
    expect(event!.payload).toEqual({ ...movedFields(r), hold_id: r.holdId, operation_id: "reserve:r1:1", units: "300", expires_at: r.expiresAt.toISOString() });
  });

  it("takes an explicit expires_at", async () => {
    await fund("r2", 100);
    const at = new Date(Date.now() + 3_600_000);
    const r = await reserve({ tenant_id: "r2", units: "100", ttl_seconds: 0, expires_at: at.toISOString().replace("Z", "+00:00") });
    expect(r.expiresAt.toISOString()).toBe(at.toISOString());
    expect(r.balance).toMatchObject({ available: 0n, held: 100n });
  });

  it("fails with insufficient_balance and leaves no trace: no transfer, no hold, no event, balances unchanged", async () => {
    await fund("r3", 99);
    const before = await counts("r3");
    await expect(reserve({ tenant_id: "r3", units: "100" })).rejects.toMatchObject({ code: "insufficient_balance" });
    await expect(reserve({ tenant_id: "nobody", units: "1" })).rejects.toMatchObject({ code: "insufficient_balance" });
    expect(await counts("r3")).toEqual(before);
    expect(await counts("nobody")).toEqual({ transfers: 0, holds: 0, events: 0 });
    expect(await balance("r3")).toEqual({ tenantId: "r3", available: 99n, held: 0n });
  });

  it("a refused operation id stays usable: the same reserve succeeds after a top-up", async () => {
    await fund("r4", 10);
    await expect(reserve({ operation_id: "reserve:r4:x", tenant_id: "r4", units: "50" })).rejects.toMatchObject({ code: "insufficient_balance" });
    await fund("r4", 40);
    expect(await reserve({ operation_id: "reserve:r4:x", tenant_id: "r4", units: "50" })).toMatchObject({
      replayed: false,
      balance: { available: 0n, held: 50n },
    });
  });

  it("replays the first result (the balance right after it) even after the hold settled; moves nothing", async () => {
    await fund("r5", 1_000);
    const first = await reserve({ operation_id: "reserve:r5:1", tenant_id: "r5", units: "400" });
    await reserve({ tenant_id: "r5", units: "100" });
    await captureHold({ ctx: ledger.ctx, input: { operation_id: "cap:r5:1", hold_id: first.holdId, units: "250" } });
    const before = await counts("r5");
    const again = await reserve({ operation_id: "reserve:r5:1", tenant_id: "r5", units: "400" });
    expect(again).toEqual({ ...first, replayed: true });
    expect(await counts("r5")).toEqual(before);
    expect(await balance("r5")).toEqual({ tenantId: "r5", available: 650n, held: 100n });
  });

  it("serializes concurrent duplicates: one hold, every caller gets it", async () => {
    await fund("r6", 500);
    const all = await Promise.all(Array.from({ length: 12 }, () => reserve({ operation_id: "reserve:r6:dup", tenant_id: "r6", units: "300" })));
    expect(all.filter((r) => !r.replayed)).toHaveLength(1);
    expect(new Set(all.map((r) => r.holdId)).size).toBe(1);
    for (const r of all) expect(r.balance).toEqual({ tenantId: "r6", available: 200n, held: 300n });
    expect(await counts("r6")).toMatchObject({ holds: 1, transfers: 2 });
  });

  it("never lets concurrent reserves overdraw: exactly as many succeed as the balance covers", async () => {
    await fund("r7", 1_000);
    const results = await Promise.allSettled(Array.from({ length: 25 }, () => reserve({ tenant_id: "r7", units: "100" })));
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(10);
    for (const r of results) if (r.status === "rejected") expect(r.reason).toMatchObject({ code: "insufficient_balance" });
    expect(await balance("r7")).toEqual({ tenantId: "r7", available: 0n, held: 1_000n });
  });

  it("refuses the same operation id with other parameters, or of another kind", async () => {
    await fund("r8", 1_000);
    await reserve({ operation_id: "reserve:r8:1", tenant_id: "r8", units: "10", ttl_seconds: 60 });
    for (const other of [
      { units: "11", ttl_seconds: 60 },
      { units: "10", ttl_seconds: 61 },
      { units: "10", ttl_seconds: 0, expires_at: new Date(Date.now() + 60_000).toISOString() },
      { units: "10", ttl_seconds: 60, reason: "different" },
      { units: "10", ttl_seconds: 60, tenant_id: "r8-other" },
    ]) {
      await expect(reserve({ operation_id: "reserve:r8:1", tenant_id: "r8", ...other })).rejects.toMatchObject({ code: "conflict" });
    }
    await expect(reserve({ operation_id: "fund-1", tenant_id: "r1", units: "1000" })).rejects.toMatchObject({ code: "conflict" });
    expect(await balance("r8")).toEqual({ tenantId: "r8", available: 990n, held: 10n });
  });

  it("rejects invalid input with invalid_request", async () => {
    await fund("r9", 1_000);
    const soon = (ms: number) => new Date(Date.now() + ms).toISOString();
    for (const bad of [
      { units: "0" },
      { units: "-1" },
      { ttl_seconds: 0 },
      { ttl_seconds: 60, expires_at: soon(60_000) },
      { ttl_seconds: 365 * 24 * 3600 + 1 },
      { ttl_seconds: 0, expires_at: "tomorrow" },
      { ttl_seconds: 0, expires_at: "2030-01-01T00:00:00" },
      { ttl_seconds: 0, expires_at: soon(-1_000) },
      { ttl_seconds: 0, expires_at: soon(366 * 24 * 3600 * 1000) },
      { reason: "x".repeat(513) },
    ]) {
      await expect(reserve({ tenant_id: "r9", ...bad })).rejects.toMatchObject({ code: "invalid_request" });
    }
    expect(await counts("r9")).toMatchObject({ holds: 0, transfers: 1 });
  });
});
