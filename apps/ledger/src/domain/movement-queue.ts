import { GroupCommit } from "@gateway/db-kit";
import { createLogger, type Logger } from "@gateway/logger";
import { activeContext, inSpan, spanContextOf, SpanKind, tracingEnabled, type Context, type Link } from "@gateway/telemetry";
import type { Outcome } from "./outcome.js";

/** Where a reserve first releases from (an open allotment of its tenant), with the ids of that release row. */
export type ReserveFrom = { holdId: string; units: bigint; operationId: string; transferId: string; eventId: string };

/** One reserve, capture, void, post or release, with the ids it may create and the request it belongs to. */
export type QueuedMovement =
  | {
      kind: "reserve";
      operationId: string;
      hash: string;
      tenantId: string;
      units: bigint;
      expiresAt: Date | null;
      ttlSeconds: number;
      reason: string;
      newHoldId: string;
      /** The new hold is an allotment (docs/decisions/0027). */
      allotment: boolean;
      from: ReserveFrom | null;
      transferId: string;
      eventId: string;
      requestId: string | null;
    }
  | {
      kind: "capture" | "void" | "post" | "release";
      operationId: string;
      hash: string;
      holdId: string;
      /** The charge of a capture, the units of a post or release; null for a void. */
      units: bigint | null;
      reason: string;
      transferId: string;
      eventId: string;
      requestId: string | null;
    };

/** What ledger_apply answers for one movement (columns of the other kind are null). */
export type MovementRow = {
  idx: number;
  outcome: Outcome;
  transfer_id: string | null;
  available: bigint | null;
  held: bigint | null;
  /** reserve: the new hold. */
  hold_id: string | null;
  /** settle: the hold as it stands after the movement. */
  id: string | null;
  tenant_id: string | null;
  units: bigint | null;
  status: string | null;
  captured_units: bigint | null;
  expires_at: Date | null;
  created_at: Date | null;
  settled_at: Date | null;
  /** settle, post, release: units returned to available (an allotment: its releases, and at its void what was left). */
  released_units: bigint | null;
  allotment: boolean | null;
};

/** `name`: the statement's name, for a named prepared statement (docs/decisions/0167). */
export type Query = (text: string, values: unknown[], name?: string) => Promise<{ rows: MovementRow[] }>;

/** A movement waiting for its batch, with the trace context of the call that asked for it. */
type Pending = { movement: QueuedMovement; caller: Context };

export type MovementQueueOptions = {
  query: Query;
  /** Woken after a batch in which something moved (its transfers are its events). */
  relay: { kick(): void };
  logger: Logger;
  /** At most this many movements per statement. */
  maxBatch?: number;
  /** At most this many statements in flight at once. */
  concurrency?: number;
  /** Told the number of movements of every statement. */
  onBatch?(size: number): void;
};

const APPLY =
  "SELECT * FROM ledger_apply($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::bigint[], $7::timestamptz[], $8::int[], $9::text[], $10::text[], $11::text[], $12::text[], $13::text[], $14::boolean[], $15::text[], $16::bigint[], $17::text[], $18::text[], $19::text[])";

/**
 * Group commit for the ledger's movements (docs/decisions/0011): what waits for a
 * statement slot goes together in one ledger_apply call — one round trip, one
 * commit, one lock of each tenant's account for the whole batch. A batch whose
 * statement fails is retried one movement at a time (GroupCommit), so a failure
 * belongs to the movement that caused it.
 */
export class MovementQueue {
  private readonly batches: GroupCommit<Pending, MovementRow>;

  constructor(private readonly options: MovementQueueOptions) {
    this.batches = new GroupCommit({
      run: (movements) => this.apply(movements),
      ...(options.maxBatch ? { maxBatch: options.maxBatch } : {}),
      ...(options.concurrency ? { concurrency: options.concurrency } : {}),
      ...(options.onBatch ? { onBatch: options.onBatch } : {}),
      onBatchFailure: (err, size) => options.logger.warn({ err, movements: size }, "movement batch failed; applying its movements one by one"),
    });
  }

  run(movement: QueuedMovement): Promise<MovementRow> {
    return this.batches.submit({ movement, caller: activeContext() });
  }

  /**
   * One statement for the batch, in a span (when tracing is on) that is a child of
   * the first movement's call and links the calls of the others.
   */
  private apply(batch: Pending[]): Promise<MovementRow[]> {
    const movements = batch.map((p) => p.movement);
    if (!tracingEnabled()) return this.applyNow(movements);
    const links: Link[] = [];
    for (const { caller } of batch.slice(1)) {
      const context = spanContextOf(caller);
      if (context) links.push({ context });
    }
    const attributes = { "db.system.name": "postgresql", "db.operation.name": "SELECT ledger_apply", "ledger.batch.size": batch.length };
    return inSpan("ledger_apply", { kind: SpanKind.CLIENT, attributes, links }, () => this.applyNow(movements), batch[0]!.caller);
  }

  private async applyNow(movements: QueuedMovement[]): Promise<MovementRow[]> {
    // Named: parsed once per connection and, the outer plan being a function scan whose
    // generic plan is its custom plan, planned once. The function's own statements keep
    // their cached plans as before (plans.test.ts).
    const { rows } = await this.options.query(APPLY, columns(movements), "ledger_apply");
    const byIdx = new Map(rows.map((r) => [r.idx, r]));
    const results = movements.map((_, i) => {
      const row = byIdx.get(i + 1);
      if (!row) throw new Error("ledger_apply returned no row for a movement");
      return row;
    });
    if (results.some((r) => r.outcome === "ok")) this.options.relay.kick();
    return results;
  }
}

/** A queue on a pg pool (the service's, or a test's); a silent logger unless one is given. */
export function poolMovements(
  pool: { query(config: { text: string; values: unknown[]; name?: string }): Promise<{ rows: unknown[] }> },
  relay: { kick(): void },
  options: Partial<Pick<MovementQueueOptions, "logger" | "maxBatch" | "concurrency" | "onBatch">> = {},
): MovementQueue {
  return new MovementQueue({
    query: async (text, values, name) => ({ rows: (await pool.query(name ? { name, text, values } : { text, values })).rows as MovementRow[] }),
    relay,
    logger: options.logger ?? createLogger({ service: "ledger", level: "silent" }),
    ...(options.maxBatch ? { maxBatch: options.maxBatch } : {}),
    ...(options.concurrency ? { concurrency: options.concurrency } : {}),
    ...(options.onBatch ? { onBatch: options.onBatch } : {}),
  });
}

/** The batch as the parallel arrays ledger_apply takes. */
function columns(movements: QueuedMovement[]): unknown[] {
  const reserve = (m: QueuedMovement) => (m.kind === "reserve" ? m : null);
  const settle = (m: QueuedMovement) => (m.kind === "reserve" ? null : m);
  return [
    movements.map((m) => m.kind),
    movements.map((m) => m.operationId),
    movements.map((m) => m.hash),
    movements.map((m) => reserve(m)?.tenantId ?? null),
    movements.map((m) => settle(m)?.holdId ?? null),
    movements.map((m) => m.units?.toString() ?? null),
    movements.map((m) => reserve(m)?.expiresAt?.toISOString() ?? null),
    movements.map((m) => reserve(m)?.ttlSeconds ?? null),
    movements.map((m) => m.reason),
    movements.map((m) => reserve(m)?.newHoldId ?? null),
    movements.map((m) => m.transferId),
    movements.map((m) => m.eventId),
    movements.map((m) => m.requestId),
    movements.map((m) => reserve(m)?.allotment ?? null),
    movements.map((m) => reserve(m)?.from?.holdId ?? null),
    movements.map((m) => reserve(m)?.from?.units.toString() ?? null),
    movements.map((m) => reserve(m)?.from?.operationId ?? null),
    movements.map((m) => reserve(m)?.from?.transferId ?? null),
    movements.map((m) => reserve(m)?.from?.eventId ?? null),
  ];
}
