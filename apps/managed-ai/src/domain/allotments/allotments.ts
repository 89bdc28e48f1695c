import { isAppError } from "@gateway/errors";
import type { Statements } from "@gateway/events";
import { newId } from "@gateway/ids";
import { allotOperation, freezeOperation, type LedgerCalls, reserveOperation } from "@gateway/ledger-client";
import type { Logger } from "@gateway/logger";
import type { ledger } from "@gateway/protos";
import type { PrismaClient } from "../../generated/prisma/client.js";

/**
 * Allotments (docs/decisions/0028): a tenant's funds set aside in the ledger as
 * one pending transfer, which metered requests claim in managed-ai's database
 * in the statement that writes their usage record (storage/usage-records.ts), instead of each
 * taking and settling a hold of its own in the ledger. This class is the part
 * that talks to the ledger:
 *  - it opens an allotment for a tenant that has none (after a request of the
 *    tenant took a hold of its own), sized from the tenant's available balance;
 *  - it posts the exact charge of each completed request to the allotment, in
 *    batches (one ApplyBatch per `lingerMs` or 450 charges), each request its
 *    own posted transfer (post:<request id>), with reports of what is claimed
 *    so the ledger's balance views show calls in flight as reserved;
 *  - when an allotment runs out, it gives what is left of it back (freeze), so
 *    the request that did not fit is decided by the ledger on the whole balance.
 * Closing allotments (idle, old, or run out) is the reconciler's (close.ts).
 */
export type AllotmentOptions = {
  enabled: boolean;
  /** The share of the available balance an allotment takes, in percent. */
  sharePercent: number;
  /** The largest allotment. */
  maxUnits: bigint;
  /** No allotment smaller than this (nor than four times the request's reservation). */
  minUnits: bigint;
  /** How long a charge waits for others before its batch is posted. */
  lingerMs: number;
  /** How long an allotment's hold lasts in the ledger (informative: the reconciler closes it first). */
  holdTtlSeconds: number;
};

export type AllotmentDeps = {
  sql: Statements;
  ledgerCalls: Pick<LedgerCalls, "reserve" | "release" | "postCharges">;
  logger: Logger;
};

/** A charge to post: the request's own operation, drawn from its allotment's hold. */
type Charge = { requestId: string; allotmentId: string; holdId: string; units: bigint };

/** The most movements and reports per ApplyBatch (the ledger takes 500 of each). */
const MAX_BATCH = 450;

export class Allotments {
  private charges: Charge[] = [];
  private touched = new Set<string>();
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> | null = null;
  private retryMs = 0;
  private readonly opening = new Set<string>();
  private readonly freezing = new Map<string, Promise<void>>();

  constructor(
    private readonly deps: AllotmentDeps,
    readonly options: AllotmentOptions,
  ) {}

  get enabled(): boolean {
    return this.options.enabled;
  }

  /** A completed request's charge (> 0) from its allotment: posted with the next batch. */
  post(charge: Charge): void {
    this.charges.push(charge);
    this.touched.add(charge.allotmentId);
    this.schedule();
  }

  /** What an allotment has claimed changed (a request opened or ended): reported with the next batch. */
  touch(allotmentId: string): void {
    this.touched.add(allotmentId);
    this.schedule();
  }

  /** Charges not posted yet (for tests and the shutdown's log). */
  get pending(): number {
    return this.charges.length;
  }

  /** Posts everything queued (the shutdown's last step; tests). */
  async drain(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    for (let round = 0; round < 100 && (this.charges.length > 0 || this.touched.size > 0 || this.flushing); round++) {
      if (this.flushing) await this.flushing;
      else await this.flush().catch(() => new Promise((r) => setTimeout(r, 200)));
    }
  }

  private schedule(): void {
    if (this.timer || this.flushing) return;
    const delay = this.charges.length >= MAX_BATCH ? 0 : Math.max(this.options.lingerMs, this.retryMs);
    this.timer = setTimeout(() => {
      this.timer = null;
      this.flushing = this.flush()
        .then(() => {
          this.retryMs = 0;
        })
        .catch((err: unknown) => {
          this.retryMs = Math.min(Math.max(this.retryMs * 2, 500), 30_000);
          this.deps.logger.warn({ err, charges: this.charges.length, retry_ms: this.retryMs }, "posting allotment charges failed; retrying");
        })
        .finally(() => {
          this.flushing = null;
          if (this.charges.length > 0 || this.touched.size > 0) this.schedule();
        });
    }, delay);
    this.timer.unref?.();
  }

  /**
   * One ApplyBatch: the queued charges (each post:<request id>, a replay of one
   * that landed before changes nothing) and a report of what each touched
   * allotment has claimed, read from the database just now. On a failure of the
   * call everything goes back in the queue; a charge the ledger refuses is
   * logged and left to the reconciler's closing of its allotment, which posts
   * what is missing before it gives the rest back.
   */
  private async flush(): Promise<void> {
    const charges = this.charges.splice(0, MAX_BATCH);
    const touched = [...this.touched].slice(0, MAX_BATCH);
    for (const id of touched) this.touched.delete(id);
    try {
      const rows =
        touched.length === 0
          ? []
          : await this.deps.sql.query<{ hold_id: string; claimed: bigint | string; version: bigint | string }>(
              "SELECT hold_id, claimed, version FROM allotments WHERE id = ANY($1::text[]) AND hold_id IS NOT NULL AND state <> 'closed'",
              [touched],
              "allotments_reports",
            );
      if (charges.length === 0 && rows.length === 0) return;
      const reports = rows.map((r) => ({ holdId: r.hold_id, claimedUnits: r.claimed, version: r.version }));
      const refusals = await this.deps.ledgerCalls.postCharges(charges, reports);
      refusals.forEach((refusal, i) => {
        if (refusal) {
          const c = charges[i]!;
          this.deps.logger.error(
            { request_id: c.requestId, allotment_id: c.allotmentId, code: refusal.code, message: refusal.message },
            "the ledger refused an allotment charge; the allotment's closing posts it or reports it",
          );
        }
      });
    } catch (err) {
      this.charges.unshift(...charges);
      for (const id of touched) this.touched.add(id);
      throw err;
    }
  }

  /**
   * After a request of `tenantId` took a hold of its own: opens an allotment for
   * the tenant if it has none, in the background, sized at `sharePercent` of
   * the available balance (capped). Not when that is below the minimum or below
   * four times the request's reservation (too little to be worth holding aside:
   * near a zero balance every request keeps its own hold). One opening per
   * tenant at a time here; the database's unique index keeps it to one across
   * replicas.
   */
  refill(tenantId: string, available: bigint, reservation: bigint): void {
    if (!this.enabled || this.opening.has(tenantId)) return;
    let units = (available * BigInt(this.options.sharePercent)) / 100n;
    if (units > this.options.maxUnits) units = this.options.maxUnits;
    const floor = reservation * 4n > this.options.minUnits ? reservation * 4n : this.options.minUnits;
    if (units < floor) return;
    this.opening.add(tenantId);
    void this.open(tenantId, units)
      .catch((err: unknown) => this.deps.logger.warn({ err, tenant_id: tenantId }, "opening an allotment failed; requests keep their own holds"))
      .finally(() => this.opening.delete(tenantId));
  }

  private async open(tenantId: string, units: bigint): Promise<void> {
    const id = newId("alt");
    const expiresAt = new Date(Date.now() + this.options.holdTtlSeconds * 1000);
    const inserted = await this.deps.sql.query<{ id: string }>(
      `INSERT INTO allotments (id, tenant_id, state, units, expires_at) VALUES ($1, $2, 'opening', $3, $4)
       ON CONFLICT (tenant_id) WHERE state IN ('opening', 'open') DO NOTHING RETURNING id`,
      [id, tenantId, units.toString(), expiresAt.toISOString()],
    );
    if (inserted.length === 0) return; // one is open or being opened
    let holdId: string;
    try {
      holdId = (await this.deps.ledgerCalls.reserve(allotmentReserve({ id, tenantId, units, expiresAt }))).hold_id;
    } catch (err) {
      // Refused (the balance moved meanwhile): no allotment. Anything else: the row stays
      // `opening` and the reconciler finds out from the ledger (replaying allot:<id>).
      if (isAppError(err) && (err.code === "insufficient_balance" || err.code === "invalid_request")) {
        await this.deps.sql.query("DELETE FROM allotments WHERE id = $1 AND state = 'opening'", [id]);
        return;
      }
      throw err;
    }
    await this.deps.sql.query(
      "UPDATE allotments SET state = 'open', hold_id = $2, last_claim_at = now(), updated_at = now() WHERE id = $1 AND state = 'opening'",
      [id, holdId],
    );
  }

  /**
   * The tenant's open allotment had no room for a request: it takes no more
   * claims (closing), and what is free in it goes back to available
   * (freeze:<id>), so the request's own hold is decided on the tenant's whole
   * balance. Every request that ran out on the same allotment waits for the same
   * release. A release that fails leaves those units in the allotment until its
   * void.
   */
  freeze(allotmentId: string): Promise<void> {
    let done = this.freezing.get(allotmentId);
    if (!done) {
      done = this.freezeNow(allotmentId)
        .catch((err: unknown) => this.deps.logger.warn({ err, allotment_id: allotmentId }, "giving back the rest of an allotment failed; its void will"))
        .finally(() => setTimeout(() => this.freezing.delete(allotmentId), 5_000).unref?.());
      this.freezing.set(allotmentId, done);
    }
    return done;
  }

  /**
   * The ledger refused a request's own hold: what finished requests gave back to
   * the tenant's closing allotments (their unused claims) goes back to available
   * now, instead of at the allotment's void, so the request can be decided again
   * on everything the tenant has. True when something was given back (the caller
   * asks the ledger once more).
   */
  async reclaim(tenantId: string): Promise<boolean> {
    if (!this.enabled) return false;
    const rows = await this.deps.sql.query<{ id: string; hold_id: string; frozen: bigint | string; given: bigint | string }>(
      `WITH before AS (
         SELECT id, frozen FROM allotments
         WHERE tenant_id = $1 AND state = 'closing' AND units - claimed - carved - frozen > 0
         ORDER BY id FOR UPDATE)
       UPDATE allotments a SET frozen = a.units - a.claimed - a.carved, version = a.version + 1, updated_at = now()
       FROM before b WHERE a.id = b.id
       RETURNING a.id, a.hold_id, a.frozen, a.frozen - b.frozen AS given`,
      [tenantId],
    );
    let given = false;
    for (const row of rows) {
      try {
        // The allotment's frozen total after this release names it: each release is its own operation.
        await this.deps.ledgerCalls.release({
          operation_id: `${freezeOperation(row.id)}:${String(row.frozen)}`,
          hold_id: row.hold_id,
          units: String(row.given),
          reason: `allotment ${row.id}: unused claims given back`,
        });
        given = true;
      } catch (err) {
        this.deps.logger.warn({ err, allotment_id: row.id }, "giving back an allotment's unused claims failed; its void will");
      }
    }
    return given;
  }

  private async freezeNow(allotmentId: string): Promise<void> {
    const rows = await this.deps.sql.query<{ hold_id: string; frozen: bigint | string }>(
      `UPDATE allotments SET state = 'closing', frozen = units - claimed - carved, version = version + 1, updated_at = now()
       WHERE id = $1 AND state = 'open' RETURNING hold_id, frozen`,
      [allotmentId],
    );
    const row = rows[0];
    if (!row || BigInt(row.frozen) === 0n) return;
    await this.deps.ledgerCalls.release({
      operation_id: freezeOperation(allotmentId),
      hold_id: row.hold_id,
      units: String(row.frozen),
      reason: `allotment ${allotmentId} ran out`,
    });
    this.touch(allotmentId);
  }
}

/** How long a carved hold lasts (informative: an operator decides it). */
export const CARVED_HOLD_TTL_SECONDS = 86_400;

/** The reservation that opens an allotment: also what the reconciler replays to find its hold. */
export function allotmentReserve(a: { id: string; tenantId: string; units: bigint; expiresAt: Date }): ledger.ReserveRequest {
  return {
    operation_id: allotOperation(a.id),
    tenant_id: a.tenantId,
    units: a.units.toString(),
    expires_at: a.expiresAt.toISOString(),
    reason: `allotment ${a.id}`,
    allotment: true,
  };
}

/**
 * The reservation that moves a record's claim out of its allotment into a hold
 * of its own (an operator decides its outcome): reserve:<id> for the record's
 * reservation, taken from the allotment in the same step (docs/decisions/0028).
 * The request's settlement, the reconciler and operators all send exactly this,
 * so a replay finds the same hold.
 */
export function carveReserve(row: { id: string; tenantId: string; reservedUnits: bigint }, allotmentHoldId: string): ledger.ReserveRequest {
  return {
    operation_id: reserveOperation(row.id),
    tenant_id: row.tenantId,
    units: row.reservedUnits.toString(),
    // Counted from the ledger's clock, and the same in every replay (an absolute
    // expiry would be in the past for the reconciler's late replay).
    ttl_seconds: CARVED_HOLD_TTL_SECONDS,
    reason: `managed request ${row.id}`,
    from_hold_id: allotmentHoldId,
    from_units: row.reservedUnits.toString(),
  };
}

/**
 * The hold of a record claimed from an allotment: carved out of the allotment by
 * replaying the carve (which takes it now if it never happened). A refusal means
 * the allotment no longer has the claim, which the reconciler's closing never
 * allows (it waits for such records): an error, not a decision.
 */
export async function carvedHold(
  ctx: { prisma: PrismaClient; ledgerCalls: Pick<LedgerCalls, "reserve"> },
  row: { id: string; tenantId: string; reservedUnits: bigint; allotmentId: string },
): Promise<{ holdId: string; replayed: boolean }> {
  const allotment = await ctx.prisma.allotment.findUnique({ where: { id: row.allotmentId } });
  if (!allotment?.holdId) throw new Error(`record ${row.id}: its allotment ${row.allotmentId} has no hold`);
  const res = await ctx.ledgerCalls.reserve(carveReserve(row, allotment.holdId));
  return { holdId: res.hold_id, replayed: res.replayed };
}

/** Counts an allotment's claims again from its records, after a decision on one of them changed its share. */
export async function recountAllotment(sql: Statements, allotmentId: string | null): Promise<void> {
  if (allotmentId) await sql.query("SELECT allotment_recount($1)", [allotmentId]);
}
