import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { CONSOLE_API_TYPES, renderConsoleApiTypes } from "./console-api-types.js";

describe("the console's API types", () => {
  it("are the types of the OpenAPI document the routes declare (else: pnpm --filter @gateway/edge run console-api-types)", () => {
    const committed = readFileSync(CONSOLE_API_TYPES, "utf8");
    expect(
      committed === renderConsoleApiTypes(),
      "apps/console/src/api-types.ts is stale: run `pnpm --filter @gateway/edge run console-api-types` and commit it",
    ).toBe(true);
  });
});
