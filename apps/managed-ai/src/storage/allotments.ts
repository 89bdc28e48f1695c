import { isAppError } from "@gateway/errors";
import type { Statements } from "@gateway/events-runtime";
import { newId } from "@gateway/contract/ids";
import { allotOperation, freezeOperation, type LedgerCalls, type Reclaimed } from "@gateway/ledger-client";
import type { Logger } from "@gateway/logger";
import type { ledger } from "@gateway/protos";
import type { AllotmentOptions, AllotmentPool, Charge } from "../domain/ports.js";

export type { AllotmentOptions };

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
export type AllotmentDeps = {
  sql: Statements;
  ledgerCalls: Pick<LedgerCalls, "reserve" | "release" | "postCharges">;
  logger: Logger;
  /**
   * Charges the ledger refused (docs/decisions/0028, addendum of issue 40): their records
   * go to review with their usage, where the reconciler charges them from a hold carved
   * out of the allotment. Without it they are only logged.
   */
  refused?: (requestIds: string[]) => Promise<void>;
};

/** A release to send: what an allotment's frozen total grew by, from `before` to `total`. */
type Release = { id: string; hold_id: string; total: bigint | string; before: bigint | string };

/** The most movements and reports per ApplyBatch (the ledger takes 500 of each). */
const MAX_BATCH = 450;

export class Allotments implements AllotmentPool {
  private charges: Charge[] = [];
  private touched = new Set<string>();
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> | null = null;
  private retryMs = 0;
  /** The last batch was full: what is queued now has waited already. */
  private afterFull = false;
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

  /** Charges the ledger refused: their records go to review with their usage (see `AllotmentDeps.refused`). */
  async chargesRefused(requestIds: string[]): Promise<void> {
    if (requestIds.length === 0 || !this.deps.refused) return;
    await this.deps
      .refused(requestIds)
      .catch((err: unknown) =>
        this.deps.logger.error(
          { err, request_ids: requestIds },
          "could not move the records of refused charges to review; the allotment's closing tries again",
        ),
      );
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

  /**
   * Every allotment that still takes or owes claims is reported with the next batches
   * (the reconciler's pass): claims a replica made and never reported (it died within
   * its linger) reach the balance views by then, not only when the allotment closes.
   */
  async reportLive(): Promise<number> {
    const rows = await this.deps.sql.query<{ id: string }>("SELECT id FROM allotments WHERE state IN ('open', 'closing') AND hold_id IS NOT NULL", []);
    for (const r of rows) this.touched.add(r.id);
    if (rows.length > 0) this.schedule();
    return rows.length;
  }

  private schedule(): void {
    if (this.flushing) return;
    // A backlog of a full batch or more goes at once, batch after batch (a linger already
    // waiting is cut short), so that no report waits a linger per 450; so does what is left
    // after a full batch (it was queued while that batch waited or was sent).
    const backlog = this.charges.length >= MAX_BATCH || this.touched.size >= MAX_BATCH || this.afterFull;
    if (this.timer) {
      if (!backlog || this.retryMs > 0) return;
      clearTimeout(this.timer);
      this.timer = null;
    }
    const delay = backlog && this.retryMs === 0 ? 0 : Math.max(this.options.lingerMs, this.retryMs);
    this.timer = setTimeout(() => {
      this.timer = null;
      this.flushing = this.flush()
        .then((full) => {
          this.retryMs = 0;
          this.afterFull = full;
        })
        .catch((err: unknown) => {
          this.afterFull = false;
          this.retryMs = Math.min(Math.max(this.retryMs * 2, 500), 30_000);
          this.deps.logger.warn({ err, charges: this.charges.length, retry_ms: this.retryMs }, "posting allotment charges failed; retrying");
        })
        .finally(() => {
          this.flushing = null;
          if (this.charges.length > 0 || this.touched.size > 0) this.schedule();
          else this.afterFull = false;
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
  private async flush(): Promise<boolean> {
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
      if (charges.length === 0 && rows.length === 0) return false;
      const reports = rows.map((r) => ({ holdId: r.hold_id, claimedUnits: r.claimed, version: r.version }));
      const refusals = await this.deps.ledgerCalls.postCharges(charges, reports);
      const refused: string[] = [];
      refusals.forEach((refusal, i) => {
        if (refusal) {
          const c = charges[i]!;
          refused.push(c.requestId);
          this.deps.logger.error(
            { request_id: c.requestId, allotment_id: c.allotmentId, code: refusal.code, message: refusal.message },
            "the ledger refused an allotment charge; its record goes to review with its usage",
          );
        }
      });
      await this.chargesRefused(refused);
      return charges.length === MAX_BATCH || touched.length === MAX_BATCH;
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
    // Still `opening` unless a request that was refused meanwhile took it over (reclaim).
    await this.deps.sql.query(
      "UPDATE allotments SET state = 'open', hold_id = $2, last_claim_at = now(), updated_at = now() WHERE id = $1 AND state = 'opening'",
      [id, holdId],
    );
  }

  /**
   * The tenant's open allotment had no room for a request: it takes no more
   * claims (closing), and what is free in it goes back to available, so the
   * request's own hold is decided on the tenant's whole balance. Every request
   * that ran out on the same allotment here waits for the same release; one that
   * ran out on another replica sends the same release (its operation id is
   * derived from the allotment's frozen total), which the ledger takes once.
   */
  freeze(allotmentId: string): Promise<void> {
    let done = this.freezing.get(allotmentId);
    if (!done) {
      done = this.freezeAndRelease({ allotmentId })
        .then(() => undefined)
        .catch((err: unknown) =>
          this.deps.logger.warn({ err, allotment_id: allotmentId }, "giving back the rest of an allotment failed; the next reclaim or closing pass will"),
        )
        .finally(() => setTimeout(() => this.freezing.delete(allotmentId), 5_000).unref?.());
      this.freezing.set(allotmentId, done);
    }
    return done;
  }

  /**
   * The ledger refused a hold of the tenant (a request's own, a push's, a lease's):
   * everything the tenant's allotments hold that no call has claimed goes back to
   * available before the hold is decided again (CONTRACT.md sections 4, 8, 9: the
   * balance views count it as available, so a 402 may not). An allotment still
   * `opening` (its reservation under way here or on another replica) is found in the
   * ledger by replaying allot:<id> and frozen whole; an open one stops taking claims;
   * every release not yet confirmed by the ledger, this replica's or another's, is
   * sent (again) and awaited. Says whether the tenant had a live allotment and
   * whether anything was given back now (ledger-client's `reserveReclaiming` decides
   * on it).
   */
  async reclaim(tenantId: string): Promise<Reclaimed> {
    if (!this.enabled) return "none";
    const live = await this.deps.sql.query<{ id: string; state: string; units: bigint | string; expires_at: Date }>(
      "SELECT id, state, units, expires_at FROM allotments WHERE tenant_id = $1 AND state IN ('opening', 'open', 'closing')",
      [tenantId],
    );
    if (live.length === 0) return "none";
    let given = false;
    for (const a of live.filter((r) => r.state === "opening")) given = (await this.takeOverOpening(tenantId, a)) || given;
    given = (await this.freezeAndRelease({ tenantId })) || given;
    return given ? "given" : "kept";
  }

  /**
   * Sends the releases the ledger has not confirmed of allotments still closing
   * (the reconciler's pass: a release lost in a crash or a failed call is sent again
   * instead of waiting for the allotment's void).
   */
  async resendReleases(): Promise<number> {
    const rows = await this.deps.sql.query<Release>(`${PENDING_RELEASES} WHERE NOT r.confirmed AND a.state = 'closing'`, []);
    await this.release(rows);
    return rows.length;
  }

  /** An allotment another request (or replica) is opening: found by replaying its reservation, then frozen whole. */
  private async takeOverOpening(tenantId: string, a: { id: string; units: bigint | string; expires_at: Date }): Promise<boolean> {
    let holdId: string;
    try {
      holdId = (await this.deps.ledgerCalls.reserve(allotmentReserve({ id: a.id, tenantId, units: BigInt(a.units), expiresAt: new Date(a.expires_at) })))
        .hold_id;
    } catch (err) {
      // Refused: it is not in the ledger (yet); what it would take is still available there.
      if (isAppError(err) && (err.code === "insufficient_balance" || err.code === "invalid_request")) return false;
      throw err;
    }
    // Frozen here; its release goes with the tenant's others (freezeAndRelease).
    return (await this.deps.sql.query(freezing("id = $1 AND state = 'opening'", ", hold_id = $2"), [a.id, holdId])).length > 0;
  }

  /**
   * Freezes what is free in one allotment (`allotmentId`) or all of a tenant's (they
   * stop taking claims), then sends every release of theirs the ledger has not
   * confirmed: this one's, and those another request or replica sent and may still
   * be sending (a replay of a landed one moves nothing).
   */
  private async freezeAndRelease(scope: { allotmentId: string } | { tenantId: string }): Promise<boolean> {
    const [statement, key, pendingWhere] =
      "allotmentId" in scope ? [FREEZE_BY_ID, scope.allotmentId, "a.id = $1"] : [FREEZE_BY_TENANT, scope.tenantId, "a.tenant_id = $1"];
    const frozen = await this.deps.sql.query<{ id: string }>(statement, [key]);
    const pending = await this.deps.sql.query<Release>(`${PENDING_RELEASES} WHERE NOT r.confirmed AND ${pendingWhere}`, [key]);
    await this.release(pending);
    for (const r of frozen) this.touch(r.id);
    return pending.length > 0;
  }

  /**
   * Each release gives back what the allotment's frozen total grew by, under
   * freeze:<id>:<total>: the same movement whoever sends it, so a replay of one that
   * landed moves nothing. Confirmed ones are marked.
   */
  private async release(rows: Release[]): Promise<void> {
    for (const row of rows) {
      try {
        await this.deps.ledgerCalls.release({
          operation_id: `${freezeOperation(row.id)}:${row.total}`,
          hold_id: row.hold_id,
          units: String(BigInt(row.total) - BigInt(row.before)),
          reason: `allotment ${row.id}: unclaimed units given back`,
        });
      } catch (err) {
        // A settled allotment gave everything back with its void: nothing is owed.
        if (!(isAppError(err) && err.code === "conflict")) throw err;
      }
      await this.deps.sql.query("UPDATE allotment_releases SET confirmed = true WHERE allotment_id = $1 AND total = $2", [row.id, String(row.total)]);
    }
  }
}

/**
 * An UPDATE that freezes what is free in the allotments `where` picks (they take no
 * more claims; `frozen` only grows) and records the new frozen total as a release to
 * send; answers the allotments it changed.
 */
function freezing(where: string, set = ""): string {
  return `WITH f AS (
    UPDATE allotments SET state = 'closing', frozen = greatest(frozen, units - claimed - carved), version = version + 1, updated_at = now()${set}
    WHERE ${where}
    RETURNING id, frozen),
  r AS (INSERT INTO allotment_releases (allotment_id, total) SELECT id, frozen FROM f WHERE frozen > 0 ON CONFLICT DO NOTHING)
  SELECT id FROM f`;
}

/** One open allotment that ran out. */
const FREEZE_BY_ID = freezing("id = $1 AND state = 'open'");

/** Every allotment of a tenant with something free. */
const FREEZE_BY_TENANT = freezing("tenant_id = $1 AND (state = 'open' OR (state = 'closing' AND units - claimed - carved > frozen))");

/** Releases with what each gives back (its total less the one before it). */
const PENDING_RELEASES = `SELECT r.allotment_id AS id, a.hold_id, r.total,
    coalesce((SELECT max(p.total) FROM allotment_releases p WHERE p.allotment_id = r.allotment_id AND p.total < r.total), 0) AS before
  FROM allotment_releases r JOIN allotments a ON a.id = r.allotment_id`;

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

/*
 * The closing's statements (domain/allotments/close.ts, docs/decisions/0028): which
 * allotments stop taking claims, what a closing one still waits for and owes, and when
 * one that was not ready is looked at again.
 */

/** Open allotments idle, old, or near their hold's expiry stop taking claims; answers them. */
export async function closeIdle(sql: Statements, idleSeconds: number, maxAgeSeconds: number): Promise<string[]> {
  const rows = await sql.query<{ id: string }>(
    `UPDATE allotments SET state = 'closing', version = version + 1, updated_at = now()
     WHERE state = 'open' AND (last_claim_at < now() - make_interval(secs => $1) OR created_at < now() - make_interval(secs => $2) OR expires_at < now() + interval '1 hour')
     RETURNING id`,
    [idleSeconds, maxAgeSeconds],
  );
  return rows.map((r) => r.id);
}

/** Records of the allotment still in flight (reserved, or in review with no hold carved yet). */
export async function recordsInFlight(sql: Statements, allotmentId: string): Promise<number> {
  const [row] = await sql.query<{ n: string }>(
    // The records not settled yet are a small table of their own (docs/decisions/0242).
    `SELECT count(*)::text AS n FROM usage_records_unsettled s JOIN usage_records r ON r.id = s.id
     WHERE r.allotment_id = $1 AND (r.status = 'reserved' OR (r.status = 'review' AND r.hold_id IS NULL))`,
    [allotmentId],
  );
  return Number(row?.n ?? 0);
}

/** The final charges of the allotment's completed records (what its posts must add up to), each one. */
export async function chargesOf(sql: Statements, allotmentId: string): Promise<{ id: string; units: bigint }[]> {
  const rows = await sql.query<{ id: string; final_units: string }>(
    "SELECT id, final_units::text FROM usage_records WHERE allotment_id = $1 AND status = 'completed' AND hold_id IS NULL AND final_units > 0",
    [allotmentId],
  );
  return rows.map((r) => ({ id: r.id, units: BigInt(r.final_units) }));
}

/** Looked at again `delay` later: the back-off of one not ready (base × 2^checks, at most 10 min), or at once (at the back of the due ones). */
export async function checkAgain(sql: Statements, allotmentId: string, delay: { baseSeconds: number } | "now"): Promise<void> {
  if (delay === "now") await sql.query("UPDATE allotments SET next_check_at = now() WHERE id = $1", [allotmentId]);
  else
    await sql.query(
      "UPDATE allotments SET checks = checks + 1, next_check_at = now() + make_interval(secs => least(600, $2 * power(2, least(checks, 7)))) WHERE id = $1",
      [allotmentId, delay.baseSeconds],
    );
}

/** An allotment a dead process left `opening` is in the ledger after all: it closes (its void gives everything back). */
export async function openingFound(sql: Statements, allotmentId: string, holdId: string): Promise<void> {
  await sql.query("UPDATE allotments SET state = 'closing', hold_id = $2, updated_at = now() WHERE id = $1 AND state = 'opening'", [allotmentId, holdId]);
}

/** An allotment a dead process left `opening` never reached the ledger: its row goes. */
export async function openingAbandoned(sql: Statements, allotmentId: string): Promise<void> {
  await sql.query("DELETE FROM allotments WHERE id = $1 AND state = 'opening'", [allotmentId]);
}

/** A closing allotment whose hold is settled in the ledger is closed. */
export async function markClosed(sql: Statements, allotmentId: string): Promise<void> {
  await sql.query("UPDATE allotments SET state = 'closed', closed_at = now(), updated_at = now() WHERE id = $1 AND state = 'closing'", [allotmentId]);
}
