import { describe, expect, it } from "vitest";
import { unitsToUsdNumber, unitsToUsdString, usdToUnitsFloor } from "./money.js";

describe("units to USD", () => {
  it("writes exactly four decimals, from bigints and decimal strings alike", () => {
    expect(unitsToUsdString(123n)).toBe("0.0123");
    expect(unitsToUsdString("123")).toBe("0.0123");
    expect(unitsToUsdString(0n)).toBe("0.0000");
    expect(unitsToUsdString(1_234_567n)).toBe("123.4567");
    expect(unitsToUsdString(-5n)).toBe("-0.0005");
    expect(unitsToUsdString("9223372036854775807")).toBe("922337203685477.5807");
    expect(unitsToUsdNumber(123n)).toBe(0.0123);
    expect(unitsToUsdNumber("2700")).toBe(0.27);
  });
});

describe("USD to units", () => {
  it("reads USD floats exactly, rounding down to whole units", () => {
    expect(usdToUnitsFloor(0.0123)).toBe(123n);
    expect(usdToUnitsFloor(0.01235)).toBe(123n);
    expect(usdToUnitsFloor(0.1 + 0.2)).toBe(3000n); // 0.30000000000000004
    expect(usdToUnitsFloor(12)).toBe(120_000n);
    expect(usdToUnitsFloor(1e-7)).toBe(0n);
    expect(usdToUnitsFloor(1.5e-3)).toBe(15n);
    expect(usdToUnitsFloor(1e21)).toBe(10n ** 25n);
    expect(usdToUnitsFloor(0)).toBe(0n);
  });

  it("refuses what is not an amount", () => {
    expect(() => usdToUnitsFloor(-1)).toThrow(RangeError);
    expect(() => usdToUnitsFloor(Number.NaN)).toThrow(RangeError);
    expect(() => usdToUnitsFloor(Number.POSITIVE_INFINITY)).toThrow(RangeError);
  });

  it("round-trips every amount of units written as USD", () => {
    for (const units of [0n, 1n, 9n, 10n, 99n, 123n, 9_999n, 10_000n, 10_001n, 123_456_789n]) {
      expect(usdToUnitsFloor(unitsToUsdNumber(units))).toBe(units);
    }
  });
});
