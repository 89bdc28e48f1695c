import { AppError } from "@gateway/errors";
import { newId } from "@gateway/contract/ids";
import { currentRequestId } from "@gateway/logger";
import type pg from "pg";
import type { TenantBalance } from "./accounts.js";
import type { LedgerContext } from "./context.js";
import type { Outcome } from "./outcome.js";

/*
 * A movement is one call of a ledger_* database function (apps/ledger/sql/):
 * a single autocommit statement that locks, checks, moves the balances and writes
 * the transfer (one row, which is also the event), or refuses without writing
 * anything. One round trip per operation, through the shared pg pool (int64 as
 * bigint, timestamps as Date).
 */

/**
 * What every movement answers: its transfer (the entry), the tenant's balance right
 * after it, and whether it is the stored answer to an earlier call with the same operation id.
 */
export type MovementResult = { entryId: string; balance: TenantBalance; replayed: boolean };

/** Fresh ids for what a movement may create, and the request it belongs to. */
export function movementIds(): { transferId: string; eventId: string; requestId: string | null } {
  return { transferId: newId("trf"), eventId: newId("evt"), requestId: currentRequestId() ?? null };
}

export async function runMovement<Row extends { outcome: Outcome } & pg.QueryResultRow>(ctx: LedgerContext, sql: string, values: unknown[]): Promise<Row> {
  const { rows } = await ctx.pool.query<Row>(sql, values);
  const row = rows[0];
  if (!row) throw new Error("a ledger function returned no row");
  if (row.outcome === "ok") ctx.relay.kick();
  return row;
}

/** The refusals every movement shares. */
export function refuse(outcome: Outcome, details: { status?: string | null; units?: bigint | null } = {}): never {
  switch (outcome) {
    case "conflict":
      throw new AppError("conflict", "operation_id was already used for a different operation");
    case "insufficient_balance":
      throw new AppError("insufficient_balance", "The available balance is insufficient.");
    case "not_found":
      throw new AppError("not_found", "No such hold.");
    case "settled":
      throw new AppError("conflict", `The hold is already ${details.status ?? "settled"}.`);
    case "over_hold":
      throw new AppError("invalid_request", `units exceed the hold (${details.units ?? "?"})`);
    case "not_allotment":
      throw new AppError("invalid_request", "The hold is not an allotment.");
    case "allotment_capture":
      throw new AppError("invalid_request", "An allotment is settled by posts and a void, not captured.");
    case "invalid_expiry":
      throw new AppError("invalid_request", "expires_at must be in the future, at most a year ahead");
    default:
      throw new Error(`unexpected ledger outcome ${outcome}`);
  }
}
