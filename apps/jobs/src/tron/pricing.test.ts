import { describe, expect, it } from "vitest";
import { leaseCostUnits } from "./pricing.js";

const pricing = { baseUnits: 100, unitsPerMegaEnergyHour: 40_000 };

describe("lease pricing", () => {
  it("is the base plus units per million energy-hours, prorated by the second", () => {
    expect(leaseCostUnits(pricing, 1_000_000, 3_600)).toBe(100n + 40_000n);
    expect(leaseCostUnits(pricing, 65_000, 3_600)).toBe(100n + 2_600n);
    expect(leaseCostUnits(pricing, 65_000, 1_800)).toBe(100n + 1_300n);
  });

  it("rounds the variable part up to a whole unit, never down", () => {
    // 1000 × 300 × 40000 / 3.6e9 = 3.33… → 4
    expect(leaseCostUnits(pricing, 1_000, 300)).toBe(104n);
    expect(leaseCostUnits({ baseUnits: 0, unitsPerMegaEnergyHour: 1 }, 1_000, 300)).toBe(1n);
    expect(leaseCostUnits({ baseUnits: 0, unitsPerMegaEnergyHour: 0 }, 5_000_000, 86_400)).toBe(0n);
  });

  it("is exact at the largest bounds", () => {
    // 5e6 × 86400 × 40000 / 3.6e9 = 4 800 000 exactly
    expect(leaseCostUnits(pricing, 5_000_000, 86_400)).toBe(100n + 4_800_000n);
    expect(leaseCostUnits({ baseUnits: 0, unitsPerMegaEnergyHour: Number.MAX_SAFE_INTEGER }, 5_000_000, 86_400)).toBe(
      (5_000_000n * 86_400n * BigInt(Number.MAX_SAFE_INTEGER) + 3_600_000_000n - 1n) / 3_600_000_000n,
    );
  });
});
