/**
 * What a ledger_* database function (apps/ledger/sql/) answers for one movement: its
 * `outcome` column. A leaf module, so the queue and the verbs share it without
 * importing each other.
 */
export type Outcome =
  | "ok"
  | "replayed"
  | "conflict"
  | "insufficient_balance"
  | "not_found"
  | "settled"
  | "over_hold"
  | "invalid_expiry"
  | "not_allotment"
  | "allotment_capture";
