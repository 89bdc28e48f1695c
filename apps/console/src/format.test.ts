import { describe, expect, it } from "vitest";
import { budgetBody, budgetText, bytes, intOrUndefined, listOrUndefined, usd } from "./format.js";

describe("formatting", () => {
  it("shows units of USD 0.0001 exactly, with four decimals", () => {
    expect(usd(0)).toBe("$0.0000");
    expect(usd(1)).toBe("$0.0001");
    expect(usd(100_000)).toBe("$10.0000");
    expect(usd(123_456_789)).toBe("$12,345.6789");
    expect(usd(-25)).toBe("-$0.0025");
    expect(usd(null)).toBe("—");
    expect(usd(Number.MAX_SAFE_INTEGER)).toBe("$900,719,925,474.0991");
    expect(usd(-123_456_789)).toBe("-$12,345.6789");
    expect(usd(1.5)).toBe("—");
  });

  it("reads whole numbers and lists from form fields", () => {
    expect(intOrUndefined(" ")).toBeUndefined();
    expect(intOrUndefined("42")).toBe(42);
    expect(intOrUndefined("4.2")).toBeNaN();
    expect(listOrUndefined("ai-model:a, ai-model:b  socialops:c")).toEqual(["ai-model:a", "ai-model:b", "socialops:c"]);
    expect(listOrUndefined("")).toBeUndefined();
  });

  it("sends a budget's amount with its period, and neither when the amount is empty", () => {
    expect(budgetBody({ budget_units: " 5000 ", budget_period: "month" })).toEqual({ budget_units: 5000, budget_period: "month" });
    expect(budgetBody({ budget_units: "", budget_period: "month" })).toEqual({});
    expect(budgetBody({ budget_units: "1.5", budget_period: "day" }).budget_units).toBeNaN();
  });

  it("shows sizes in bytes below 1 KiB, else in binary units with one decimal at most", () => {
    expect(bytes(0)).toBe("0 B");
    expect(bytes(1023)).toBe("1023 B");
    expect(bytes(1536)).toBe("1.5 KiB");
    expect(bytes(100 * 1_048_576)).toBe("100 MiB");
    expect(bytes(10 * 1_073_741_824)).toBe("10 GiB");
    expect(bytes(5 * 1_099_511_627_776 * 1024)).toBe("5,120 TiB");
    expect(bytes(undefined)).toBe("—");
  });
});

describe("budgetText", () => {
  it("shows spent, limit and what is left of the period, or none", () => {
    expect(budgetText(null)).toBe("none");
    expect(budgetText({ limit_units: 100, spent_units: 70, reserved_units: 10, period: "day", resets_at: "2026-11-26T00:00:00.000Z" })).toBe(
      "$0.0070 of $0.0100 this day ($0.0020 left) · resets 2026-11-26 00:00:00 UTC",
    );
    expect(budgetText({ limit_units: 5, spent_units: 8, reserved_units: 0, period: "month", resets_at: "2026-12-01T00:00:00.000Z" })).toContain(
      "($0.0000 left)",
    );
  });
});
