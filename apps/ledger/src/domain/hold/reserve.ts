import { z } from "zod";
import { parseInput } from "@gateway/errors";
import { newId } from "@gateway/ids";
import type { LedgerContext } from "../../db.js";
import type { TenantBalance } from "../accounts.js";
import { requestHash } from "../fingerprint.js";
import { movementIds, refuse } from "../movement.js";
import { Note, OperationId, PositiveUnits, TenantId } from "../schemas.js";

/** The longest a hold may be set to last. */
export const MAX_HOLD_SECONDS = 365 * 24 * 3600;

export const ReserveHoldInput = z
  .object({
    operation_id: OperationId,
    tenant_id: TenantId,
    units: PositiveUnits,
    /** ISO 8601 with an offset; "" when ttl_seconds is given instead. */
    expires_at: z.union([z.literal(""), z.iso.datetime({ offset: true })]).default(""),
    /** 0 when expires_at is given instead. */
    ttl_seconds: z.number().int().min(0).max(MAX_HOLD_SECONDS).default(0),
    reason: Note,
  })
  .refine((r) => (r.expires_at === "") !== (r.ttl_seconds === 0), "exactly one of expires_at and ttl_seconds is required");
export type ReserveHoldInput = z.input<typeof ReserveHoldInput>;

export type ReserveHoldResult = {
  holdId: string;
  entryId: string;
  units: bigint;
  expiresAt: Date;
  /** The balance right after the reservation. */
  balance: TenantBalance;
  replayed: boolean;
};


/**
 * First phase of a two-phase transfer: units move from the tenant's available
 * account to its held account under a new hold, event ledger.reserved. The
 * expiry is counted on the database's clock. Insufficient available balance
 * is refused before anything is written: no transfer, no hold, no event.
 */
export async function reserveHold({ ctx, input }: { ctx: LedgerContext; input: ReserveHoldInput }): Promise<ReserveHoldResult> {
  const req = parseInput(ReserveHoldInput, input);
  const expiresAt = req.expires_at === "" ? null : new Date(req.expires_at);
  const expiry = expiresAt ? `at:${expiresAt.toISOString()}` : `ttl:${req.ttl_seconds}`;
  const hash = requestHash(["reserve", req.tenant_id, req.units.toString(), expiry, req.reason]);
  const ids = movementIds();
  const row = await ctx.movements.run({
    kind: "reserve",
    operationId: req.operation_id,
    hash,
    tenantId: req.tenant_id,
    units: req.units,
    expiresAt,
    ttlSeconds: req.ttl_seconds,
    reason: req.reason,
    newHoldId: newId("hold"),
    ...ids,
  });
  if (row.outcome !== "ok" && row.outcome !== "replayed") refuse(row.outcome);
  return {
    holdId: row.hold_id!,
    entryId: row.transfer_id!,
    units: row.units!,
    expiresAt: row.expires_at!,
    balance: { tenantId: req.tenant_id, available: row.available!, held: row.held! },
    replayed: row.outcome === "replayed",
  };
}
