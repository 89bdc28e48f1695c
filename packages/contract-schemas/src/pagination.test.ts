import { describe, expect, it } from "vitest";
import { cursorPageQuery } from "./pagination.js";

describe("cursorPageQuery", () => {
  const query = cursorPageQuery({ max: 100, item: "event" });
  it("takes cursor and limit from a query string, both optional", () => {
    expect(query.parse({})).toEqual({});
    expect(query.parse({ cursor: "12", limit: "50" })).toEqual({ cursor: "12", limit: 50 });
  });
  it("refuses unknown parameters, a limit out of bounds and an over-long cursor", () => {
    expect(query.safeParse({ page: "2" }).success).toBe(false);
    expect(query.safeParse({ limit: "0" }).success).toBe(false);
    expect(query.safeParse({ limit: "101" }).success).toBe(false);
    expect(query.safeParse({ cursor: "1".repeat(33) }).success).toBe(false);
  });
  it("documents both parameters", () => {
    expect(query.shape.limit.description).toBe("1..100, default 100.");
    expect(query.shape.cursor.description).toMatch(/an event's `cursor`/);
  });
});
