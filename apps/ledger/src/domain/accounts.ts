/**
 * Accounts of the double-entry journal. Each tenant has two, `available` and
 * `held`, whose running balances live in one `accounts` row (CHECK >= 0),
 * changed under that row's lock. The system accounts `funding` (source of
 * credits) and `revenue` (captured charges) keep no running balance: their
 * balance is the sum of their entries, so they never become a row every
 * movement must lock.
 */
export const ACCOUNTS = ["available", "held", "funding", "revenue"] as const;
export type AccountName = (typeof ACCOUNTS)[number];

export type TenantBalance = { tenantId: string; available: bigint; held: bigint };

export type TransferKind = "credit" | "reserve" | "capture" | "void" | "post" | "release";

/** A transfer (the one row a movement writes: its entry) as the ledger answers it. */
export type Transfer = { entryId: string; operationId: string; kind: TransferKind; tenantId: string; units: bigint; holdId: string | null };

/** A transfer row as the ledger's SQL returns it. */
export type TransferRow = { id: string; operation_id: string; kind: TransferKind; tenant_id: string; units: bigint; hold_id: string | null };

export function toTransfer(row: TransferRow): Transfer {
  return { entryId: row.id, operationId: row.operation_id, kind: row.kind, tenantId: row.tenant_id, units: row.units, holdId: row.hold_id };
}

/** One signed leg of a transfer. */
export type Leg = { account: AccountName; units: bigint };

export const HOLD_STATUSES = ["open", "captured", "voided"] as const;
export type HoldStatus = (typeof HOLD_STATUSES)[number];

export type HoldView = {
  holdId: string;
  tenantId: string;
  units: bigint;
  status: HoldStatus;
  /** Units moved to revenue (0 unless captured; an allotment: its posts so far). */
  capturedUnits: bigint;
  /** Units returned to available (0 while open; an allotment: its releases so far, and at its void what was left). */
  releasedUnits: bigint;
  /** An allotment (docs/decisions/0027): spent by posts and releases, closed by a void. */
  allotment: boolean;
  expiresAt: Date;
  createdAt: Date;
  settledAt: Date | null;
};

/** A hold row as the ledger's SQL returns it. */
export type HoldRow = {
  id: string;
  tenant_id: string;
  units: bigint;
  status: string;
  captured_units: bigint | null;
  expires_at: Date;
  created_at: Date;
  settled_at: Date | null;
  /** Absent from rows of older shapes: then derived from the status. */
  released_units?: bigint | null;
  allotment?: boolean | null;
};

export function toHoldView(row: HoldRow): HoldView {
  const status = row.status as HoldStatus;
  const captured = row.captured_units ?? 0n;
  return {
    holdId: row.id,
    tenantId: row.tenant_id,
    units: row.units,
    status,
    capturedUnits: captured,
    releasedUnits: row.released_units ?? (status === "open" ? 0n : row.units - captured),
    allotment: row.allotment ?? false,
    expiresAt: row.expires_at,
    createdAt: row.created_at,
    settledAt: row.settled_at,
  };
}
