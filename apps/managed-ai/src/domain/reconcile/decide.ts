import type { HoldState } from "@gateway/ledger-client";
import type { UsageRecord } from "../rows.js";

/**
 * What the reconciler may conclude about a record from the ledger's answer.
 * Pure, so every branch is tested without a ledger.
 *
 * Codes whose provider call did not happen or failed (nothing to charge):
 *   ledger_unavailable: the reservation's answer was lost; no provider call followed.
 *   provider failures recorded by settleFailed when the void could not be sent.
 * Codes whose usage is known (charge it): settlement_failed (usage_json kept).
 * Everything else in review (usage_unavailable, deadline_exceeded,
 * stream_interrupted, a stream's provider_malformed_response, interrupted, and
 * client_disconnected on records from before docs/decisions/0177) has an
 * unknown usage: only the ledger's own final state can settle it.
 */
export const PROVIDER_FAILURES = new Set([
  "provider_unreachable",
  "provider_timeout",
  "provider_error",
  "provider_auth_failed",
  "provider_not_found",
  "provider_rate_limited",
  "provider_rejected",
]);

/** The code given to a `reserved` record whose process is gone while its hold stays open. */
export const INTERRUPTED = "interrupted";

export type { HoldState };

export type Decision =
  /** The ledger settled it already: the record follows. */
  | { kind: "completed"; finalUnits: bigint }
  | { kind: "failed"; refundedUnits: bigint }
  /** The hold is open and the charge is known: capture by replaying capture:<id>. */
  | { kind: "capture" }
  /** The hold is open and nothing is owed: void by replaying void:<id>. */
  | { kind: "void" }
  /** Usage unknown and the hold open: an operator decides (a `reserved` orphan moves to review). */
  | { kind: "operator" };

type Row = Pick<UsageRecord, "status" | "errorCode" | "usageJson" | "stream">;

/** Nothing is owed for this record: the provider was never called, or it failed. */
export function nothingOwed(row: Row): boolean {
  if (row.status !== "review") return false;
  if (row.errorCode === "ledger_unavailable") return true;
  if (row.errorCode && PROVIDER_FAILURES.has(row.errorCode)) return true;
  // A JSON answer that was not JSON failed the request; a stream's may have been used.
  return row.errorCode === "provider_malformed_response" && !row.stream;
}

/** The charge is known and only its capture is missing. */
export function chargeKnown(row: Row): boolean {
  return row.status === "review" && row.errorCode === "settlement_failed" && row.usageJson !== null;
}

export function decide(row: Row, hold: HoldState): Decision {
  if (hold === "none") return { kind: "failed", refundedUnits: 0n };
  if (hold.status === "captured") return { kind: "completed", finalUnits: hold.capturedUnits };
  if (hold.status === "voided") return { kind: "failed", refundedUnits: hold.releasedUnits };
  if (chargeKnown(row)) return { kind: "capture" };
  if (nothingOwed(row)) return { kind: "void" };
  return { kind: "operator" };
}
