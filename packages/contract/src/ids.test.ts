import { describe, expect, it } from "vitest";
import { ID_PATTERN, isId, newId, ulid } from "./ids.js";

describe("newId", () => {
  it("is prefixed, 26 characters of ULID, and fits the contract's id pattern", () => {
    const id = newId("req");
    expect(id).toMatch(/^req_[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(ID_PATTERN.test(id)).toBe(true);
  });

  it("sorts by creation time", () => {
    const a = newId("key", 1_700_000_000_000);
    const b = newId("key", 1_700_000_000_001);
    expect(a < b).toBe(true);
  });

  it("does not repeat", () => {
    const ids = new Set(Array.from({ length: 10_000 }, () => ulid()));
    expect(ids.size).toBe(10_000);
  });

  it("rejects prefixes that would break the pattern", () => {
    expect(() => newId("Bad-Prefix")).toThrow(/invalid id prefix/);
    expect(() => newId("")).toThrow(/invalid id prefix/);
  });
});

describe("isId", () => {
  it("checks the contract pattern", () => {
    expect(isId("abc_DEF-123")).toBe(true);
    expect(isId("a".repeat(129))).toBe(false);
    expect(isId("has space")).toBe(false);
    expect(isId("")).toBe(false);
  });
});
