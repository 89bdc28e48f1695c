import { z } from "zod";
import { parseInput } from "@gateway/errors";
import type { LedgerContext } from "../context.js";
import { requestHash } from "../fingerprint.js";
import { movementIds, refuse, runMovement, type MovementResult } from "../movement.js";
import type { Outcome } from "../outcome.js";
import { OperationId, PositiveUnits, TenantId } from "../schemas.js";

export const CreateCreditInput = z.object({
  operation_id: OperationId,
  tenant_id: TenantId,
  units: PositiveUnits,
  reason: z.string().trim().min(1).max(240),
});
export type CreateCreditInput = z.input<typeof CreateCreditInput>;

export type CreateCreditResult = MovementResult;

type Row = { outcome: Outcome; transfer_id: string; available: bigint; held: bigint };

/**
 * Top-up: funding → tenant available, one balanced transfer, event
 * ledger.credited. A retry with the same operation_id (also a concurrent one:
 * it waits on the account's row lock) returns the stored result; with other
 * parameters it is a conflict.
 */
export async function createCredit({ ctx, input }: { ctx: LedgerContext; input: CreateCreditInput }): Promise<CreateCreditResult> {
  const credit = parseInput(CreateCreditInput, input);
  const hash = requestHash(["credit", credit.tenant_id, credit.units.toString(), credit.reason]);
  const ids = movementIds();
  const row = await runMovement<Row>(ctx, "SELECT * FROM ledger_credit($1, $2, $3, $4::bigint, $5, $6, $7, $8)", [
    credit.operation_id,
    hash,
    credit.tenant_id,
    credit.units.toString(),
    credit.reason,
    ids.transferId,
    ids.eventId,
    ids.requestId,
  ]);
  if (row.outcome !== "ok" && row.outcome !== "replayed") refuse(row.outcome);
  return {
    entryId: row.transfer_id,
    balance: { tenantId: credit.tenant_id, available: row.available, held: row.held },
    replayed: row.outcome === "replayed",
  };
}
