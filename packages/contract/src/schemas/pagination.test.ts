import { describe, expect, it } from "vitest";
import { z } from "zod";
import { cursorPageQuery, listPageQuery, newestFirst, pageInput, pageOf, pageRequested, pageStart, type NewestFirstArgs } from "./pagination.js";

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

describe("listPageQuery and pages", () => {
  const query = z.strictObject({ ...listPageQuery({ item: "keys", fallback: "the newest 200" }) });
  it("takes limit 1..200 and a cursor", () => {
    expect(query.parse({})).toEqual({});
    expect(query.parse({ limit: "200", cursor: "7" })).toEqual({ limit: 200, cursor: "7" });
    expect(query.safeParse({ limit: "201" }).success).toBe(false);
    expect(query.safeParse({ limit: "0" }).success).toBe(false);
    expect(query.shape.limit.description).toBe("1..200; without limit and cursor: the newest 200.");
  });
  it("tells a paged request from one as before", () => {
    expect(pageRequested({})).toBe(false);
    expect(pageRequested({ limit: 5 })).toBe(true);
    expect(pageRequested({ cursor: "" })).toBe(true);
  });
  it("parses the service side: 0 is the list's cap, the cursor defaults to the start", () => {
    const input = z.object(pageInput(500, 500));
    expect(input.parse({})).toEqual({ limit: 500, cursor: "" });
    expect(input.parse({ limit: 3, cursor: "9" })).toEqual({ limit: 3, cursor: "9" });
    expect(input.safeParse({ limit: 501 }).success).toBe(false);
  });
  it("cuts a page and gives the next cursor only when more rows followed", () => {
    const rows = [{ seq: 9n }, { seq: 7n }, { seq: 4n }];
    expect(pageOf(rows, 2, (r) => r.seq)).toEqual({ items: rows.slice(0, 2), nextCursor: "7" });
    expect(pageOf(rows, 3, (r) => r.seq)).toEqual({ items: rows, nextCursor: "" });
    expect(pageOf([], 3, (r: { seq: bigint }) => r.seq)).toEqual({ items: [], nextCursor: "" });
  });
  it("refuses a cursor this format never gave", () => {
    expect(pageStart("")).toBeNull();
    expect(pageStart("12")).toBe(12n);
    expect(() => pageStart("abc")).toThrow(/cursor must be/);
  });
});

describe("newestFirst", () => {
  // A table of rows seq 1..5, read as Prisma would: matching `where`, below `seq.lt`, newest first.
  const table = [1n, 2n, 3n, 4n, 5n].map((seq) => ({ seq, tenant: seq % 2n === 0n ? "b" : "a" }));
  const calls: NewestFirstArgs<{ tenant: string }>[] = [];
  const find = async (args: NewestFirstArgs<{ tenant: string }>) => {
    calls.push(args);
    const below = args.where.seq?.lt;
    return table
      .filter((r) => r.tenant === args.where.tenant && (below === undefined || r.seq < below))
      .sort((x, y) => Number(y.seq - x.seq))
      .slice(0, args.take);
  };
  it("reads limit + 1 rows newest first from the start, and pages on with the cursor to the end", async () => {
    const first = await newestFirst(find, { tenant: "a" }, { cursor: "", limit: 2 });
    expect(first.items.map((r) => r.seq)).toEqual([5n, 3n]);
    expect(calls.at(-1)).toEqual({ where: { tenant: "a" }, orderBy: { seq: "desc" }, take: 3 });
    const second = await newestFirst(find, { tenant: "a" }, { cursor: first.nextCursor, limit: 2 });
    expect(second.items.map((r) => r.seq)).toEqual([1n]);
    expect(calls.at(-1)).toEqual({ where: { tenant: "a", seq: { lt: 3n } }, orderBy: { seq: "desc" }, take: 3 });
    expect(second.nextCursor).toBe("");
  });
  it("refuses a cursor the list never gave before reading", async () => {
    const before = calls.length;
    await expect(newestFirst(find, { tenant: "a" }, { cursor: "x", limit: 2 })).rejects.toMatchObject({ code: "invalid_request" });
    expect(calls.length).toBe(before);
  });
});
