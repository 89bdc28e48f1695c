import { createCredit } from "../domain/credit/create.js";
import { reserveHold, type ReserveHoldInput } from "../domain/hold/reserve.js";
import type { MovementResult } from "../domain/movement.js";
import type { TestLedger } from "./ledger-database.js";

/**
 * The moves most ledger tests begin with, on a test file's ledger, each under an
 * operation id of its own: `fund` credits a tenant, `reserve` holds 100 units for
 * 15 minutes unless the input says otherwise.
 */
export function testMoves(ledger: TestLedger) {
  let n = 0;
  return {
    fund: (tenant: string, units: number) =>
      createCredit({ ctx: ledger.ctx, input: { operation_id: `fund-${++n}`, tenant_id: tenant, units: String(units), reason: "test funds" } }),
    reserve: (input: Partial<ReserveHoldInput> & { tenant_id: string }) =>
      reserveHold({ ctx: ledger.ctx, input: { operation_id: `res-${++n}`, units: "100", ttl_seconds: 900, ...input } }),
  };
}

/**
 * What the event of a hold's movement says that its result says too: the tenant, the
 * entry and the balance right after it, as decimal strings.
 */
export function movedFields(r: MovementResult) {
  return { tenant_id: r.balance.tenantId, entry_id: r.entryId, available_units: r.balance.available.toString(), reserved_units: r.balance.held.toString() };
}
