// Writes apps/console/src/api-types.ts from the built edge's OpenAPI document
// (docs/decisions/0196). Run through `pnpm --filter @gateway/edge run console-api-types`,
// which builds the edge first; src/console-api-types.test.ts fails while the file is stale.
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const { CONSOLE_API_TYPES, renderConsoleApiTypes } = await import("../dist/console-api-types.js");
const path = fileURLToPath(CONSOLE_API_TYPES);
const next = renderConsoleApiTypes();
let current = "";
try {
  current = readFileSync(path, "utf8");
} catch {
  // First run: nothing to compare with.
}
if (current === next) console.log(`${path} is current`);
else {
  writeFileSync(path, next);
  console.log(`wrote ${path} (${next.length} characters)`);
}
