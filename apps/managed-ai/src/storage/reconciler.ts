import type { Statements } from "@gateway/events-runtime";
import type { LockPool } from "../domain/ports.js";

/*
 * The reconciler's own statements (domain/reconcile/): whether anything may become
 * due, when a record left as it is comes back, and the lock that picks one replica.
 */

/**
 * Is there anything the reconciler may have to do later, as the database stands: a record
 * still `reserved` or in `review`, an allotment not closed, a budget claim not settled, or a
 * completed record past the captures checkpoint (not checked yet)? One statement, each part
 * an index probe, whatever the size of the history.
 */
export async function workPending(sql: Statements): Promise<boolean> {
  const [row] = await sql.query<{ pending: boolean }>(
    // The captures part is a scalar subquery ordered like the index, with the checkpoint as
    // an InitPlan parameter: an index range scan from the checkpoint on. As a join inside
    // EXISTS the planner scanned all of usage_records (100,000 rows, 30-150 ms).
    `SELECT EXISTS (SELECT 1 FROM usage_records_unsettled)
         OR EXISTS (SELECT 1 FROM allotments WHERE state IN ('opening', 'open', 'closing'))
         OR EXISTS (SELECT 1 FROM budget_claims WHERE settled_at IS NULL)
         OR (SELECT h.id FROM usage_record_own_holds h JOIN usage_records u ON u.id = h.id
             WHERE h.settled_at >= (SELECT settled_at FROM reconciler_checkpoints WHERE name = 'captures')
               AND (h.settled_at > (SELECT settled_at FROM reconciler_checkpoints WHERE name = 'captures')
                    OR h.id > (SELECT record_id FROM reconciler_checkpoints WHERE name = 'captures'))
               AND u.status = 'completed'
             ORDER BY h.settled_at, h.id LIMIT 1) IS NOT NULL AS pending`,
    [],
  );
  return row?.pending ?? true;
}

/**
 * The reconciler's candidates, by id (docs/decisions/0028, 0242): the records not settled
 * yet are a small table of their own, kept by a trigger on usage_records, so these read a
 * few hundred rows whatever the history. `reserved` records created before `olderThan`,
 * oldest first; then `review` records, those never looked at first. Managed records with
 * something reserved only, and only those due (`recheck_at` null or past).
 */
export async function candidateIds(sql: Statements, status: "reserved" | "review", olderThan: Date | null, now: Date, limit: number): Promise<string[]> {
  const rows = await sql.query<{ id: string }>(
    `SELECT r.id FROM usage_records_unsettled s JOIN usage_records r ON r.id = s.id
     WHERE s.status = $1 AND r.status = $1 AND ($2::timestamptz IS NULL OR s.created_at < $2::timestamptz)
       AND r.reserved_units > 0 AND r.mode = 'managed' AND (r.recheck_at IS NULL OR r.recheck_at <= $3)
     ORDER BY ${status === "reserved" ? "s.created_at, s.id" : "r.recheck_at ASC NULLS FIRST, r.updated_at, r.id"} LIMIT $4`,
    [status, olderThan?.toISOString() ?? null, now.toISOString(), limit],
  );
  return rows.map((r) => r.id);
}

/**
 * The completed records with a hold of their own settled after the captures checkpoint and
 * before `settledBefore`, in settlement order (from usage_record_own_holds, kept by a trigger).
 */
export async function capturesAfter(sql: Statements, cp: { settledAt: Date; recordId: string }, settledBefore: Date, limit: number): Promise<string[]> {
  const rows = await sql.query<{ id: string }>(
    `SELECT h.id FROM usage_record_own_holds h JOIN usage_records u ON u.id = h.id
     WHERE h.settled_at <= $3 AND (h.settled_at > $1 OR (h.settled_at = $1 AND h.id > $2)) AND u.status = 'completed'
     ORDER BY h.settled_at, h.id LIMIT $4`,
    [cp.settledAt.toISOString(), cp.recordId, settledBefore.toISOString(), limit],
  );
  return rows.map((r) => r.id);
}

/** A record left as it is comes back `seconds` later (only while it is still reserved or in review). */
export async function recheckAt(sql: Statements, recordId: string, seconds: number): Promise<void> {
  await sql.query("UPDATE usage_records SET recheck_at = now() + make_interval(secs => $2) WHERE id = $1 AND status IN ('reserved', 'review')", [
    recordId,
    seconds,
  ]);
}

/** "mai_rec1": the reconciler's advisory lock key. */
const LOCK_KEY = "7881696681537135409";

/** Runs `fn` while holding a session advisory lock on one connection; null when another replica holds it. */
export async function exclusively<T>(pool: LockPool, fn: () => Promise<T>): Promise<T | null> {
  const client = await pool.connect();
  try {
    const { rows } = await client.query<{ locked: boolean }>("SELECT pg_try_advisory_lock($1::bigint) AS locked", [LOCK_KEY]);
    if (!rows[0]?.locked) return null;
    try {
      return await fn();
    } finally {
      await client.query("SELECT pg_advisory_unlock($1::bigint)", [LOCK_KEY]);
    }
  } finally {
    client.release();
  }
}

/** The captures' check has looked at every completed record up to this one (settlement order). */
export async function advanceCapturesCheckpoint(sql: Statements, through: { settledAt: Date; id: string }): Promise<void> {
  await sql.query("UPDATE reconciler_checkpoints SET settled_at = $1, record_id = $2 WHERE name = 'captures'", [through.settledAt.toISOString(), through.id]);
}
