import { GroupCommit } from "@gateway/db-kit";
import type { Statements } from "@gateway/events-runtime";
import type { BudgetRefusal, BudgetReservation, SettledCounter } from "../domain/ports.js";

/**
 * Spend budgets' rows (docs/decisions/0024): counters per budget and period, and a
 * claim per request and budget. The statements the budget verbs run, in one place.
 */

const RESERVE = `SELECT request_index, refused_scope, spent_units::text, reserved_units::text
  FROM budget_reserve_batch($1::text[], $2::text[], $3::bigint[], $4::text[], $5::int[], $6::int[], $7::text[], $8::text[], $9::text[], $10::timestamptz[], $11::bigint[])`;

/**
 * Budget reservations, group-committed like the usage records' writes (decision
 * 0012): requests that arrive while a batch is being reserved go together in
 * the next one, one statement and one commit for all of them, and the counters
 * they share are locked once per batch instead of once per request. Each
 * request is still all or none on its own; a batch that fails is reserved
 * again request by request.
 */
export class BudgetReservations {
  private readonly commit: GroupCommit<BudgetReservation, BudgetRefusal | null>;

  constructor(sql: Statements, options: { maxBatch?: number } = {}) {
    this.commit = new GroupCommit({
      maxBatch: options.maxBatch ?? 200,
      run: async (items) => {
        const counters = items.flatMap((item) => item.counters);
        const first: number[] = [];
        let next = 1;
        for (const item of items) {
          first.push(next);
          next += item.counters.length;
        }
        const rows = await sql.query<{ request_index: number; refused_scope: string; spent_units: string; reserved_units: string }>(RESERVE, [
          items.map((r) => r.requestId),
          items.map((r) => r.tenantId),
          items.map((r) => r.units.toString()),
          items.map((r) => r.source),
          first,
          items.map((r) => r.counters.length),
          counters.map((c) => c.scope),
          counters.map((c) => c.id),
          counters.map((c) => c.period),
          counters.map((c) => c.periodStart.toISOString()),
          counters.map((c) => c.limitUnits.toString()),
        ]);
        const refused = new Map(rows.map((r) => [r.request_index - 1, r]));
        return items.map((item, i) => {
          const r = refused.get(i);
          if (!r) return null;
          return {
            index: item.counters.findIndex((c) => c.scope === r.refused_scope),
            spentUnits: BigInt(r.spent_units),
            reservedUnits: BigInt(r.reserved_units),
          };
        });
      },
    });
  }

  /** Null when reserved (or already reserved by this request id); the refusal otherwise. */
  reserve(reservation: BudgetReservation): Promise<BudgetRefusal | null> {
    return this.commit.submit(reservation);
  }
}

/** One writer per connection pool's statements, made on first use. */
const writers = new WeakMap<Statements, BudgetReservations>();
export function budgetReservations(sql: Statements): BudgetReservations {
  let writer = writers.get(sql);
  if (!writer) {
    writer = new BudgetReservations(sql);
    writers.set(sql, writer);
  }
  return writer;
}

/** What counters hold now, in the order asked (absent counters: nothing spent yet). */
export async function readCounters(
  sql: Statements,
  keys: { scope: string; id: string; periodStart: Date }[],
): Promise<{ spentUnits: bigint; reservedUnits: bigint }[]> {
  const rows = await sql.query<{ i: number; spent_units: string; reserved_units: string }>(
    `SELECT u.i::int AS i, b.spent_units::text, b.reserved_units::text
     FROM unnest($1::text[], $2::text[], $3::timestamptz[]) WITH ORDINALITY AS u(s, id, st, i)
     JOIN budget_counters b ON b.scope = u.s AND b.scope_id = u.id AND b.period_start = u.st`,
    [keys.map((k) => k.scope), keys.map((k) => k.id), keys.map((k) => k.periodStart.toISOString())],
  );
  const byIndex = new Map(rows.map((r) => [r.i - 1, r]));
  return keys.map((_, i) => ({ spentUnits: BigInt(byIndex.get(i)?.spent_units ?? "0"), reservedUnits: BigInt(byIndex.get(i)?.reserved_units ?? "0") }));
}

/**
 * The part both settlements share: the due claims (request_id, scope, final_units) are
 * marked settled once each, summed per counter (an UPDATE ... FROM changes a row once),
 * and moved from reserved to spent; answers the counters as they now are.
 */
const SETTLE_DUE = `claims AS (
       UPDATE budget_claims c SET settled_at = now(), final_units = due.final_units
       FROM due WHERE c.request_id = due.request_id AND c.scope = due.scope AND c.settled_at IS NULL
       RETURNING c.request_id, c.tenant_id, c.scope, c.scope_id, c.period, c.period_start, c.limit_units, c.units, c.final_units, c.created_at),
     per_counter AS (
       SELECT scope, scope_id, period_start, min(tenant_id) AS tenant_id, min(period) AS period,
         (array_agg(limit_units ORDER BY created_at DESC))[1] AS limit_units, sum(units) AS units, sum(final_units) AS final_units,
         (array_agg(request_id ORDER BY created_at DESC))[1] AS request_id
       FROM claims GROUP BY scope, scope_id, period_start)
     UPDATE budget_counters b SET reserved_units = b.reserved_units - p.units, spent_units = b.spent_units + p.final_units
     FROM per_counter p WHERE b.scope = p.scope AND b.scope_id = p.scope_id AND b.period_start = p.period_start
     RETURNING p.request_id, p.tenant_id, b.scope, b.scope_id, p.period, b.period_start, p.limit_units::text, b.spent_units::text,
       b.threshold_at IS NOT NULL AS threshold_marked, b.reached_at IS NOT NULL AS reached_marked`;

/**
 * Settles the AI claims of these requests whose records have their end state: a
 * completed record's charge, at most the claim's reservation; a failed one 0. A claim
 * without a record is settled at 0 when `orphans` says so or once it is older than
 * `orphanAfterSeconds`.
 */
export function settleRecordClaims(sql: Statements, requestIds: string[], orphans: boolean, orphanAfterSeconds: number): Promise<SettledCounter[]> {
  return sql.query<SettledCounter>(
    `WITH due AS (
       SELECT c.request_id, c.scope, CASE WHEN r.status = 'completed' THEN least(COALESCE(r.final_units, 0), c.units) ELSE 0 END AS final_units
       FROM budget_claims c LEFT JOIN usage_records r ON r.id = c.request_id
       WHERE c.request_id = ANY($1::text[]) AND c.settled_at IS NULL AND c.source = 'ai'
         AND (r.status IN ('completed', 'failed')
              OR (r.id IS NULL AND ($2::boolean OR c.created_at < now() - make_interval(secs => $3::int))))),
     ${SETTLE_DUE}`,
    [requestIds, orphans, orphanAfterSeconds],
  );
}

/** Settles the push claims of a message at the charge given (0 releases), once. */
export function settlePushClaims(sql: Statements, requestId: string, finalUnits: bigint): Promise<SettledCounter[]> {
  return sql.query<SettledCounter>(
    `WITH due AS (
       SELECT request_id, scope, $2::bigint AS final_units FROM budget_claims
       WHERE request_id = $1 AND settled_at IS NULL AND source = 'push'),
     ${SETTLE_DUE}`,
    [requestId, finalUnits.toString()],
  );
}

/** Requests with AI claims still open, oldest first (the sweep's candidates). */
export async function openClaimRequests(sql: Statements, limit: number): Promise<string[]> {
  const rows = await sql.query<{ request_id: string }>(
    `SELECT DISTINCT request_id FROM (SELECT request_id FROM budget_claims WHERE settled_at IS NULL AND source = 'ai' ORDER BY created_at LIMIT $1) c`,
    [limit],
  );
  return rows.map((r) => r.request_id);
}

/** Marks a counter's crossing of 80 % (threshold) or 100 % (reached) once per period; true for the one writer that set it. */
export async function markCrossing(
  tx: { $executeRawUnsafe(query: string, ...values: unknown[]): Promise<number> },
  crossing: "threshold" | "reached",
  key: { scope: string; id: string; periodStart: Date },
): Promise<boolean> {
  const column = crossing === "threshold" ? "threshold_at" : "reached_at";
  const changed = await tx.$executeRawUnsafe(
    `UPDATE budget_counters SET ${column} = now() WHERE scope = $1 AND scope_id = $2 AND period_start = $3::timestamptz AND ${column} IS NULL`,
    key.scope,
    key.id,
    key.periodStart.toISOString(),
  );
  return changed > 0;
}
