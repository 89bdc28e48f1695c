import { describe, expect, it } from "vitest";
import { listLimit, listLimitQuery } from "./limits.js";

describe("listLimitQuery (HTTP query string)", () => {
  const limit = listLimitQuery(100);
  it("coerces 1..max from text; absent stays absent", () => {
    expect(limit.parse("1")).toBe(1);
    expect(limit.parse("100")).toBe(100);
    expect(limit.parse(undefined)).toBeUndefined();
  });
  it("refuses 0, max + 1, negatives, decimals and text", () => {
    for (const bad of ["0", "101", "-1", "1.5", "ten"]) expect(limit.safeParse(bad).success, bad).toBe(false);
  });
});

describe("listLimit (between services)", () => {
  const limit = listLimit(200, 100);
  it("0 and absent mean the fallback; 1..max pass", () => {
    expect(limit.parse(0)).toBe(100);
    expect(limit.parse(undefined)).toBe(100);
    expect(limit.parse(1)).toBe(1);
    expect(limit.parse(200)).toBe(200);
  });
  it("refuses max + 1, negatives and decimals", () => {
    for (const bad of [201, -1, 1.5]) expect(limit.safeParse(bad).success, String(bad)).toBe(false);
  });
});
