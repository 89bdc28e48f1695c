import { describe, expect, it } from "vitest";
import { appendPage, pagePath } from "./paging.js";

describe("paging", () => {
  it("asks for a page with limit, then with the cursor", () => {
    expect(pagePath("/console/keys", 50, null)).toBe("/console/keys?limit=50");
    expect(pagePath("/console/services/managed-ai/usage?mode=byok", 100, "42")).toBe("/console/services/managed-ai/usage?mode=byok&limit=100&cursor=42");
  });
  it("appends a page without repeating a row", () => {
    expect(appendPage([{ id: "a" }, { id: "b" }], [{ id: "b" }, { id: "c" }], (r) => r.id)).toEqual([{ id: "a" }, { id: "b" }, { id: "c" }]);
  });
});
