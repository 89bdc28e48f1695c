import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { captureOperation, creditOperation, reserveOperation, voidOperation } from "./operations.js";

describe("the operation ids", () => {
  it("of a hold derive from its record's id", () => {
    expect([reserveOperation("job_1"), captureOperation("job_1"), voidOperation("job_1")]).toEqual(["reserve:job_1", "capture:job_1", "void:job_1"]);
  });

  it("of a credit: by Idempotency-Key in its first form while it fits the ledger's 128 characters, hashed beyond; else by request", () => {
    expect(creditOperation("ten_1", "k-1", "req_1")).toBe("credit:ten_1:k-1");
    expect(creditOperation("ten_1", undefined, "req_1")).toBe("credit:req_1");
    expect(creditOperation("ten_1", "", "req_1")).toBe("credit:req_1");
    const fits = "k".repeat(128 - "credit:ten_1:".length);
    expect(creditOperation("ten_1", fits, "req_1")).toBe(`credit:ten_1:${fits}`);
    const long = `${fits}k`;
    const hashed = creditOperation("ten_1", long, "req_1");
    expect(hashed).toBe(`credit:h:${createHash("sha256").update(`ten_1\n${long}`).digest("base64url")}`);
    expect(hashed.length).toBeLessThanOrEqual(128);
  });
});
