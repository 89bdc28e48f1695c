import { describe, expect, it } from "vitest";
import { unitsToUsdString } from "../money.js";
import { UNITS_MAX, UNITS_MIN } from "./units.js";
import { UsdDecimal, usdAmount } from "./usd.js";

describe("UsdDecimal", () => {
  it("is exactly what the cost headers carry, over the whole units range", () => {
    for (const units of [0n, 1n, 123n, 10_000n, -5n, UNITS_MAX, UNITS_MIN + 1n]) {
      expect(UsdDecimal.safeParse(unitsToUsdString(units)).success, String(units)).toBe(true);
    }
  });

  it("refuses other decimal forms", () => {
    for (const bad of ["", "1", "1.0", "1.00000", "01.0000", ".0123", "1,0000", "1e-4", "1234567890123456.0000"]) {
      expect(UsdDecimal.safeParse(bad).success, bad).toBe(false);
    }
  });
});

describe("usdAmount", () => {
  it("takes finite non-negative numbers, up to a route's ceiling", () => {
    expect(usdAmount().safeParse(0).success).toBe(true);
    expect(usdAmount().safeParse(0.0123).success).toBe(true);
    expect(usdAmount().safeParse(-0.01).success).toBe(false);
    expect(usdAmount().safeParse(Number.POSITIVE_INFINITY).success).toBe(false);
    expect(usdAmount(1_000_000).safeParse(1_000_000).success).toBe(true);
    expect(usdAmount(1_000_000).safeParse(1_000_000.01).success).toBe(false);
  });
});
