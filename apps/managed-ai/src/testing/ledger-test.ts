import { afterAll, beforeAll } from "vitest";
import type { AllotmentOptions } from "../storage/allotments.js";
import { createTestContext, type TestContext, type TestManagedAiContext } from "./context.js";
import { switchableLedger, type SwitchableLedger } from "./interleave.js";
import { startTestLedger, type TestLedger } from "./ledger.js";

/** A test file's managed-ai against the real ledger: what `openLedgerTest` started, and how to stop it. */
export type LedgerTest = { L: TestLedger; door: SwitchableLedger; t: TestContext; ctx: TestManagedAiContext; close(): Promise<void> };

/**
 * The set-up of a managed-ai test against the real ledger (a process of its own): the ledger,
 * a door in front of it that can take it away and counts the calls (the context's ledger only
 * with `door: true`; otherwise the context calls the ledger directly), a context on a database
 * of its own, and a tenant funded when asked. `close` stops them in the reverse order.
 */
export async function openLedgerTest(
  options: { door?: boolean; fund?: { tenant: string; units: bigint }; allotments?: Partial<AllotmentOptions> } = {},
): Promise<LedgerTest> {
  const L = await startTestLedger();
  const door = switchableLedger(L.calls);
  const t = await createTestContext({ ledgerCalls: options.door ? door.calls : L.calls }, options.allotments ? { allotments: options.allotments } : {});
  if (options.fund) await L.credit(options.fund.tenant, options.fund.units);
  const close = async () => {
    await t.close();
    door.close();
    await L.close();
  };
  return { L, door, t, ctx: t.ctx, close };
}

/**
 * `openLedgerTest` for a whole test file: opened before its first test (given to `use`, which
 * keeps what the file needs), closed after its last.
 */
export function ledgerTestPerFile(options: Parameters<typeof openLedgerTest>[0], use: (lt: LedgerTest) => void): void {
  let lt: LedgerTest | undefined;
  beforeAll(async () => {
    lt = await openLedgerTest(options);
    use(lt);
  }, 120_000);
  afterAll(() => lt?.close());
}
