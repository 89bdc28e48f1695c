import { describe, expect, it } from "vitest";
import { intOrUndefined, listOrUndefined, usd } from "./format.js";

describe("formatting", () => {
  it("shows units of USD 0.0001 exactly, with four decimals", () => {
    expect(usd(0)).toBe("$0.0000");
    expect(usd(1)).toBe("$0.0001");
    expect(usd(100_000)).toBe("$10.0000");
    expect(usd(123_456_789)).toBe("$12,345.6789");
    expect(usd(-25)).toBe("-$0.0025");
    expect(usd(null)).toBe("—");
  });

  it("reads whole numbers and lists from form fields", () => {
    expect(intOrUndefined(" ")).toBeUndefined();
    expect(intOrUndefined("42")).toBe(42);
    expect(intOrUndefined("4.2")).toBeNaN();
    expect(listOrUndefined("ai-model:a, ai-model:b  socialops:c")).toEqual(["ai-model:a", "ai-model:b", "socialops:c"]);
    expect(listOrUndefined("")).toBeUndefined();
  });
});
