import type { ledger } from "@gateway/protos";
import type { HoldView, TenantBalance, Transfer } from "../domain/accounts.js";
import type { LedgerEntry } from "../domain/entry/list.js";
import type { TenantInvariant } from "../domain/invariant/check.js";
import type { MovementResult } from "../domain/movement.js";

/** Domain values → proto messages (int64 as decimal strings, times as ISO 8601). */

export function toBalance(b: TenantBalance): ledger.Balance {
  return { tenant_id: b.tenantId, currency: "USD", available_units: b.available.toString(), reserved_units: b.held.toString() };
}

/** The fields every movement's answer shares (Credit, Reserve, and the settlements). */
export function toMovement(r: MovementResult): { entry_id: string; balance: ledger.Balance; replayed: boolean } {
  return { entry_id: r.entryId, balance: toBalance(r.balance), replayed: r.replayed };
}

export function toHold(h: HoldView): ledger.Hold {
  return {
    hold_id: h.holdId,
    tenant_id: h.tenantId,
    units: h.units.toString(),
    status: h.status,
    captured_units: h.capturedUnits.toString(),
    released_units: h.releasedUnits.toString(),
    expires_at: h.expiresAt.toISOString(),
    created_at: h.createdAt.toISOString(),
    settled_at: h.settledAt?.toISOString() ?? "",
    allotment: h.allotment,
  };
}

export function toTransferOf(t: Transfer): ledger.TransferOf {
  return { operation_id: t.operationId, kind: t.kind, tenant_id: t.tenantId, units: t.units.toString(), hold_id: t.holdId ?? "", entry_id: t.entryId };
}

export function toEntry(e: LedgerEntry): ledger.Entry {
  return {
    entry_id: e.entryId,
    operation_id: e.operationId,
    kind: e.kind,
    units: e.units.toString(),
    hold_id: e.holdId ?? "",
    reason: e.reason,
    created_at: e.createdAt.toISOString(),
    balance_after: toBalance(e.balanceAfter),
    legs: e.legs.map((l) => ({ account: l.account, units: l.units.toString() })),
  };
}

export function toTenantInvariant(t: TenantInvariant): ledger.TenantInvariant {
  return {
    tenant_id: t.tenantId,
    credits: t.credits.toString(),
    captured: t.captured.toString(),
    available: t.available.toString(),
    held: t.held.toString(),
    journal_available: t.journalAvailable.toString(),
    journal_held: t.journalHeld.toString(),
    journal_funding: t.journalFunding.toString(),
    journal_revenue: t.journalRevenue.toString(),
    open_holds: t.openHolds.toString(),
    ok: t.ok,
  };
}
