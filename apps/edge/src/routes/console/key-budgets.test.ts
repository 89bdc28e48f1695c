import { describe, expect, it } from "vitest";
import { periodEnd, withFreshBudget } from "./key-budgets.js";

describe("key budget views", () => {
  it("end a period at the next UTC midnight or first of the month", () => {
    expect(periodEnd("day", new Date("2026-12-31T23:59:59.999Z")).toISOString()).toBe("2027-01-01T00:00:00.000Z");
    expect(periodEnd("month", new Date("2026-02-01T00:00:00.000Z")).toISOString()).toBe("2026-03-01T00:00:00.000Z");
  });

  it("show a new key's budget as untouched, and no budget as null", () => {
    const base = {
      id: "key_1",
      name: "k",
      prefix: "gw_x",
      scopes: [],
      service_aliases: null,
      allowed_ips: null,
      daily_quota: null,
      rate_limit_per_minute: null,
      concurrency_limit: null,
      expires_at: null,
      created_at: "",
    };
    const now = new Date("2026-11-25T10:00:00Z");
    expect(withFreshBudget({ ...base, budget: { limit_units: 500, period: "month" } }, now).budget).toEqual({
      limit_units: 500,
      spent_units: 0,
      reserved_units: 0,
      period: "month",
      resets_at: "2026-12-01T00:00:00.000Z",
    });
    expect(withFreshBudget({ ...base, budget: null }, now).budget).toBeNull();
  });
});
