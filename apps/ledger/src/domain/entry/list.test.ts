import { describe, expect, it } from "vitest";
import { ledgerPerFile } from "../../testing/ledger-per-file.js";
import { createCredit } from "../credit/create.js";
import { captureHold } from "../hold/capture.js";
import { reserveHold } from "../hold/reserve.js";
import { voidHold } from "../hold/void.js";
import { listEntries, type LedgerEntry } from "./list.js";

const ledger = ledgerPerFile();

describe("listEntries", () => {
  it("lists a tenant's movements newest first with balanced legs and the balance after each, page by page", async () => {
    const ctx = ledger.ctx;
    await createCredit({ ctx, input: { operation_id: "l:credit", tenant_id: "l1", units: "1000", reason: "funds" } });
    await createCredit({ ctx, input: { operation_id: "l:other", tenant_id: "l2", units: "5", reason: "someone else" } });
    const a = await reserveHold({ ctx, input: { operation_id: "l:res-a", tenant_id: "l1", units: "300", ttl_seconds: 60 } });
    const b = await reserveHold({ ctx, input: { operation_id: "l:res-b", tenant_id: "l1", units: "200", ttl_seconds: 60 } });
    await captureHold({ ctx, input: { operation_id: "l:cap-a", hold_id: a.holdId, units: "120", reason: "final" } });
    await voidHold({ ctx, input: { operation_id: "l:void-b", hold_id: b.holdId } });

    const seen: LedgerEntry[] = [];
    let cursor = "";
    for (let pages = 0; pages < 10; pages++) {
      const page = await listEntries({ ctx, input: { tenant_id: "l1", limit: 2, cursor } });
      expect(page.entries.length).toBeLessThanOrEqual(2);
      seen.push(...page.entries);
      cursor = page.nextCursor;
      if (!cursor) break;
    }
    expect(seen.map((e) => [e.operationId, e.kind, e.units])).toEqual([
      ["l:void-b", "void", 200n],
      ["l:cap-a", "capture", 120n],
      ["l:res-b", "reserve", 200n],
      ["l:res-a", "reserve", 300n],
      ["l:credit", "credit", 1000n],
    ]);
    for (const e of seen) expect(e.legs.reduce((s, l) => s + l.units, 0n)).toBe(0n);
    expect(seen[1]).toMatchObject({ holdId: a.holdId, reason: "final", balanceAfter: { available: 680n, held: 200n } });
    expect(seen[1]!.legs).toEqual([
      { account: "held", units: -300n },
      { account: "revenue", units: 120n },
      { account: "available", units: 180n },
    ]);
    expect(seen[0]!.balanceAfter).toEqual({ tenantId: "l1", available: 880n, held: 0n });
    expect(seen[4]).toMatchObject({ holdId: null, balanceAfter: { available: 1000n, held: 0n } });

    const all = await listEntries({ ctx, input: { tenant_id: "l1" } });
    expect(all.entries).toHaveLength(5);
    expect(all.nextCursor).toBe("");
    expect((await listEntries({ ctx, input: { tenant_id: "nobody" } })).entries).toEqual([]);
  });

  it("rejects a foreign cursor and a limit out of range", async () => {
    await expect(listEntries({ ctx: ledger.ctx, input: { tenant_id: "l1", cursor: "not-a-cursor" } })).rejects.toMatchObject({ code: "invalid_request" });
    await expect(listEntries({ ctx: ledger.ctx, input: { tenant_id: "l1", limit: 201 } })).rejects.toMatchObject({ code: "invalid_request" });
  });

  it("pages with the one cursor format (the decimal position); a cursor of the old base64 form is a clean 400 (decision 0202)", async () => {
    const { ctx } = ledger;
    const first = await listEntries({ ctx, input: { tenant_id: "l1", limit: 1 } });
    expect(first.nextCursor).toMatch(/^(0|[1-9]\d*)$/);
    const legacy = Buffer.from(`seq:${first.nextCursor}`).toString("base64url");
    await expect(listEntries({ ctx, input: { tenant_id: "l1", cursor: legacy } })).rejects.toMatchObject({ code: "invalid_request" });
  });
});
