import { z } from "zod";
import { parseInput } from "@gateway/errors";
import { newId } from "@gateway/contract/ids";
import type { LedgerContext } from "../context.js";
import { requestHash } from "../fingerprint.js";
import { movementIds, refuse, type MovementResult } from "../movement.js";
import { HoldId, NonNegativeUnits, Note, OperationId, PositiveUnits, TenantId } from "../schemas.js";

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
    /** The hold is an allotment (docs/decisions/0027): spent by posts and releases, closed by a void. */
    allotment: z.boolean().default(false),
    /** First give back `from_units` of this open allotment of the same tenant ("": none). */
    from_hold_id: z.union([z.literal(""), HoldId]).default(""),
    from_units: NonNegativeUnits.optional(),
    /** The operation id of that release ("": `<operation_id>:from`); naming it after another movement makes the two exclusive. */
    from_operation_id: z.union([z.literal(""), OperationId]).default(""),
  })
  .refine((r) => (r.expires_at === "") !== (r.ttl_seconds === 0), "exactly one of expires_at and ttl_seconds is required")
  .refine((r) => (r.from_hold_id === "") === ((r.from_units ?? 0n) === 0n), "from_hold_id and a positive from_units go together")
  .refine(
    (r) => r.from_operation_id === "" || (r.from_hold_id !== "" && r.from_operation_id !== r.operation_id),
    "from_operation_id names the release of from_hold_id, another operation",
  );
export type ReserveHoldInput = z.input<typeof ReserveHoldInput>;

export type ReserveHoldResult = MovementResult & { holdId: string; units: bigint; expiresAt: Date };

/**
 * First phase of a two-phase transfer: units move from the tenant's available
 * account to its held account under a new hold, event ledger.reserved. The
 * expiry is counted on the database's clock. Insufficient available balance
 * is refused before anything is written: no transfer, no hold, no event.
 *
 * With `allotment` the hold is an allotment; with `from_hold_id` the same movement
 * first releases `from_units` of that open allotment (a release row of its own,
 * operation id `from_operation_id`, by default `<operation_id>:from`), and the two
 * happen together or not at all. Operation ids are unique across kinds, so a release
 * named after another movement the caller may send (a request's post) is refused as a
 * conflict once that movement exists, and refuses it once it exists itself. The name
 * is not hashed: a replay of the reserve is answered from its stored result first.
 */
export async function reserveHold({ ctx, input }: { ctx: LedgerContext; input: ReserveHoldInput }): Promise<ReserveHoldResult> {
  const req = parseInput(ReserveHoldInput, input);
  const expiresAt = req.expires_at === "" ? null : new Date(req.expires_at);
  const expiry = expiresAt ? `at:${expiresAt.toISOString()}` : `ttl:${req.ttl_seconds}`;
  const fromUnits = req.from_units ?? 0n;
  // The shape of before for a plain reserve, so that retries of stored reserves still match.
  const extra = req.allotment || req.from_hold_id !== "" ? [req.allotment ? "allotment" : "hold", req.from_hold_id, fromUnits.toString()] : [];
  const hash = requestHash(["reserve", req.tenant_id, req.units.toString(), expiry, ...extra, req.reason]);
  const ids = movementIds();
  const from =
    req.from_hold_id === ""
      ? null
      : {
          holdId: req.from_hold_id,
          units: fromUnits,
          operationId: req.from_operation_id || `${req.operation_id}:from`,
          transferId: newId("trf"),
          eventId: newId("evt"),
        };
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
    allotment: req.allotment,
    from,
    ...ids,
  });
  if (row.outcome !== "ok" && row.outcome !== "replayed") refuse(row.outcome, { units: row.units });
  return {
    holdId: row.hold_id!,
    entryId: row.transfer_id!,
    units: row.units!,
    expiresAt: row.expires_at!,
    balance: { tenantId: req.tenant_id, available: row.available!, held: row.held! },
    replayed: row.outcome === "replayed",
  };
}
