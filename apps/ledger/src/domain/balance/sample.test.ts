import { describe, expect, it } from "vitest";
import { ledgerPerFile } from "../../testing/ledger-per-file.js";
import { postAllotment } from "../allotment/post.js";
import { reportAllotments } from "../allotment/report.js";
import { createCredit } from "../credit/create.js";
import { reserveHold } from "../hold/reserve.js";
import { getBalance } from "./get.js";
import { sampleAvailable } from "./sample.js";

const ledger = ledgerPerFile();

describe("sampleAvailable (the metrics' view of every balance)", () => {
  it("gives every tenant's available units exactly as the balance view does, allotments included, or their sum", async () => {
    const ctx = ledger.ctx;
    await createCredit({ ctx, input: { operation_id: "c1", tenant_id: "ten_s1", units: "10000", reason: "x" } });
    await createCredit({ ctx, input: { operation_id: "c2", tenant_id: "ten_s2", units: "500", reason: "x" } });
    const allotment = await reserveHold({ ctx, input: { operation_id: "a1", tenant_id: "ten_s1", units: "2500", ttl_seconds: 900, allotment: true } });
    await reserveHold({ ctx, input: { operation_id: "h1", tenant_id: "ten_s2", units: "100", ttl_seconds: 900 } });
    await postAllotment({ ctx, input: { operation_id: "p1", hold_id: allotment.holdId, units: "300", reason: "req" } });
    await reportAllotments({ ctx, input: { reports: [{ hold_id: allotment.holdId, claimed_units: "700", version: "1" }] } });
    const sampled = new Map((await sampleAvailable(ledger.ctx.pool, true)).map((r) => [r.tenantId, r.available]));
    for (const tenant of ["ten_s1", "ten_s2"]) expect(sampled.get(tenant)).toBe((await getBalance({ ctx, input: { tenant_id: tenant } })).available);
    expect(sampled.get("ten_s1")).toBe(10_000n - 700n); // 300 posted, 400 claimed in flight
    expect(sampled.get("ten_s2")).toBe(400n);
    expect(await sampleAvailable(ledger.ctx.pool, false)).toEqual([{ tenantId: "", available: [...sampled.values()].reduce((a, b) => a + b, 0n) }]);
  });
});
