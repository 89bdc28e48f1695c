import { afterAll, beforeAll } from "vitest";
import { createTestContext, type TestContext } from "./context.js";

/**
 * The jobs context of one test file: made on a fresh database before the file's tests,
 * closed after them. The object returned is filled in by `beforeAll`, so a file holds it
 * in a `const` and reads `t.ctx`, `t.ledger` in its tests.
 */
export function contextPerFile(): TestContext {
  const t = {} as TestContext;
  beforeAll(async () => {
    Object.assign(t, await createTestContext());
  });
  afterAll(async () => {
    await t.close?.();
  });
  return t;
}
