import { afterAll, beforeAll } from "vitest";
import { openTestLedger, type TestLedger } from "./ledger-database.js";

/**
 * The ledger of one test file: opened on a fresh database before the file's tests, closed
 * after them. The object returned is filled in by `beforeAll`, so a file holds it in a
 * `const` and reads `ledger.ctx`, `ledger.sql` in its tests.
 */
export function ledgerPerFile(options: { poolSize?: number } = {}): TestLedger {
  const ledger = {} as TestLedger;
  beforeAll(async () => {
    Object.assign(ledger, await openTestLedger(options));
  });
  afterAll(async () => {
    await ledger.close?.();
  });
  return ledger;
}
