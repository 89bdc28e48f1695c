import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

describe("the contract package", () => {
  it("imports nothing but the catalog, the subjects and zod (no NATS, no database, no loop)", () => {
    const imports = (file: string) => [...readFileSync(new URL(file, import.meta.url), "utf8").matchAll(/from "([^"]+)"/g)].map((m) => m[1]);
    expect(imports("./index.ts")).toEqual(["./catalog.js", "./catalog.js", "./subjects.js"]);
    expect(imports("./catalog.ts")).toEqual(["zod"]);
    expect(imports("./subjects.ts")).toEqual(["./catalog.js"]);
  });

  it("depends on zod alone (the runtime is @gateway/events-runtime)", () => {
    const manifest = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
    expect(Object.keys(manifest.dependencies)).toEqual(["zod"]);
  });
});
