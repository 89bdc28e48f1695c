import { describe, expect, it } from "vitest";
import { AppError } from "@gateway/errors";
import { NonNegativeUnits, PositiveUnits, PositiveUnitsNumber, Units, UNITS_MAX, UNITS_MIN, UnitsNumber, unitsToNumber } from "./units.js";

describe("Units (int64, the ledger's bigint columns)", () => {
  it("reads decimal strings and numbers as bigint, across the whole int64 range", () => {
    expect(Units.parse("0")).toBe(0n);
    expect(Units.parse("-5")).toBe(-5n);
    expect(Units.parse(7)).toBe(7n);
    expect(Units.parse("9223372036854775807")).toBe(UNITS_MAX);
    expect(Units.parse("-9223372036854775808")).toBe(UNITS_MIN);
  });

  it("refuses overflow, decimals, empty and text", () => {
    for (const bad of ["9223372036854775808", "-9223372036854775809", "99999999999999999999", "1.5", "", " 1", "1e3", "abc", 1.5, Number.NaN]) {
      expect(Units.safeParse(bad).success, String(bad)).toBe(false);
    }
    expect(Units.safeParse("9223372036854775808").error?.issues[0]?.message).toBe("units out of range (int64)");
  });
});

describe("NonNegativeUnits and PositiveUnits", () => {
  it("take 19-digit amounts up to int64's maximum (the old 18-digit pattern refused them)", () => {
    expect(NonNegativeUnits.parse("1000000000000000000")).toBe(10n ** 18n);
    expect(PositiveUnits.parse("9223372036854775807")).toBe(UNITS_MAX);
  });

  it("refuse negatives; positive refuses zero", () => {
    expect(NonNegativeUnits.parse("0")).toBe(0n);
    expect(NonNegativeUnits.safeParse("-1").success).toBe(false);
    expect(NonNegativeUnits.safeParse(-1).success).toBe(false);
    expect(PositiveUnits.safeParse("0").success).toBe(false);
    expect(PositiveUnits.safeParse(0).success).toBe(false);
    expect(PositiveUnits.safeParse("9223372036854775808").success).toBe(false);
  });
});

describe("units as JSON numbers", () => {
  it("are whole, non-negative and exact", () => {
    expect(UnitsNumber.safeParse(0).success).toBe(true);
    expect(UnitsNumber.safeParse(Number.MAX_SAFE_INTEGER).success).toBe(true);
    expect(UnitsNumber.safeParse(Number.MAX_SAFE_INTEGER + 1).success).toBe(false);
    expect(UnitsNumber.safeParse(-1).success).toBe(false);
    expect(UnitsNumber.safeParse(0.5).success).toBe(false);
    expect(PositiveUnitsNumber.safeParse(0).success).toBe(false);
    expect(PositiveUnitsNumber.safeParse(1).success).toBe(true);
  });

  it("unitsToNumber converts exactly or fails loudly", () => {
    expect(unitsToNumber("123")).toBe(123);
    expect(unitsToNumber(-4n)).toBe(-4);
    expect(unitsToNumber(String(Number.MAX_SAFE_INTEGER))).toBe(Number.MAX_SAFE_INTEGER);
    expect(() => unitsToNumber("9007199254740992")).toThrow(AppError);
  });
});
