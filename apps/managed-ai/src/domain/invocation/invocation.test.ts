import { describe, expect, it } from "vitest";
import { costUnits } from "./cost.js";
import { inputTokenUpperBound } from "./tokens.js";

const price = (pi: number, po: number) => ({ inputUnitsPerMtok: BigInt(pi), outputUnitsPerMtok: BigInt(po) });

describe("costUnits", () => {
  it("is the contract's formula, rounded up to a whole unit", () => {
    // 1000 input at 5000/Mtok = 5 units; 500 output at 15000/Mtok = 7.5 units → 12.5 → 13
    expect(costUnits(1000n, 500n, price(5000, 15000), 0n)).toBe(13n);
    // exactly whole: no rounding
    expect(costUnits(1000n, 1000n, price(5000, 15000), 0n)).toBe(20n);
    // 1 token at 1 unit/Mtok is still 1 unit
    expect(costUnits(1n, 0n, price(1, 1), 0n)).toBe(1n);
    expect(costUnits(0n, 0n, price(1000, 1000), 0n)).toBe(0n);
  });

  it("applies the discount before rounding", () => {
    // 20 units × (10000 − 2500)/10000 = 15 exactly
    expect(costUnits(1000n, 1000n, price(5000, 15000), 2500n)).toBe(15n);
    // 13 → 12.5 × 0.9 = 11.25 → 12
    expect(costUnits(1000n, 500n, price(5000, 15000), 1000n)).toBe(12n);
    expect(costUnits(1000n, 500n, price(5000, 15000), 10000n)).toBe(0n);
  });

  it("is exact far beyond float precision", () => {
    const big = costUnits(10n ** 12n, 10n ** 12n, price(999_999_999, 999_999_999), 1n);
    expect(big).toBe((10n ** 12n * 999_999_999n * 2n * 9_999n + 10n ** 10n - 1n) / 10n ** 10n);
  });

  it("refuses impossible inputs", () => {
    expect(() => costUnits(-1n, 0n, price(1, 1), 0n)).toThrow();
    expect(() => costUnits(1n, 0n, price(1, 1), 10_001n)).toThrow();
  });
});

describe("inputTokenUpperBound", () => {
  it("counts UTF-8 bytes plus the chat format's overhead", () => {
    expect(inputTokenUpperBound([{ role: "user", text: "hello" }])).toBe(BigInt(3 + 4 + 4 + 5));
    expect(inputTokenUpperBound([{ role: "user", text: "é😀" }])).toBe(BigInt(3 + 4 + 4 + 2 + 4));
    expect(
      inputTokenUpperBound([
        { role: "system", name: "bob", text: "" },
        { role: "user", text: "x" },
      ]),
    ).toBe(BigInt(3 + (4 + 6 + 3) + (4 + 4 + 1)));
  });
});
