import { GroupCommit } from "@gateway/db-kit";
import type { Statements } from "@gateway/events";
import type { Budget } from "./budget.js";
import { periodBounds } from "./period.js";

/** One request's reservation against its budgets. */
export type BudgetReservation = { requestId: string; tenantId: string; budgets: Budget[]; units: bigint; now: Date; source: "ai" | "push" };

/** Why a request was refused: the first of its budgets without room, as it stood. */
export type BudgetRefusal = { index: number; spentUnits: bigint; reservedUnits: bigint };

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
        const budgets = items.flatMap((item) => item.budgets.map((b) => ({ b, start: periodBounds(b.period, item.now).start })));
        const first: number[] = [];
        let next = 1;
        for (const item of items) {
          first.push(next);
          next += item.budgets.length;
        }
        const rows = await sql.query<{ request_index: number; refused_scope: string; spent_units: string; reserved_units: string }>(RESERVE, [
          items.map((r) => r.requestId),
          items.map((r) => r.tenantId),
          items.map((r) => r.units.toString()),
          items.map((r) => r.source),
          first,
          items.map((r) => r.budgets.length),
          budgets.map((x) => x.b.scope),
          budgets.map((x) => x.b.id),
          budgets.map((x) => x.b.period),
          budgets.map((x) => x.start.toISOString()),
          budgets.map((x) => x.b.limitUnits.toString()),
        ]);
        const refused = new Map(rows.map((r) => [r.request_index - 1, r]));
        return items.map((item, i) => {
          const r = refused.get(i);
          if (!r) return null;
          return {
            index: item.budgets.findIndex((b) => b.scope === r.refused_scope),
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

/**
 * One writer per connection pool's statements, made on first use: the service's
 * context keeps its shape (and its wiring in main.ts) while budgets are new.
 */
const writers = new WeakMap<Statements, BudgetReservations>();
export function budgetReservations(sql: Statements): BudgetReservations {
  let writer = writers.get(sql);
  if (!writer) {
    writer = new BudgetReservations(sql);
    writers.set(sql, writer);
  }
  return writer;
}
