import { describe, expect, it } from "vitest";
import { backoffDelayMs } from "./backoff.js";

describe("backoffDelayMs", () => {
  it("doubles from the base, with jitter in [0.5, 1.5)", () => {
    const mid = () => 0.5;
    expect([1, 2, 3, 4, 8].map((n) => backoffDelayMs(n, 1000, mid))).toEqual([1000, 2000, 4000, 8000, 128000]);
    expect(backoffDelayMs(3, 1000, () => 0)).toBe(2000);
    expect(backoffDelayMs(3, 1000, () => 0.999999)).toBe(6000);
  });

  it("never overflows and treats nonsense counts as the first", () => {
    expect(backoffDelayMs(0, 100, () => 0.5)).toBe(100);
    expect(backoffDelayMs(-3, 100, () => 0.5)).toBe(100);
    expect(Number.isFinite(backoffDelayMs(10_000, 1000, () => 0.5))).toBe(true);
    expect(backoffDelayMs(10_000, 1, () => 0.5)).toBe(2 ** 20);
  });
});
