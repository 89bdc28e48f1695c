import { newId } from "@gateway/contract/ids";
import { currentRequestId } from "@gateway/logger";
import { validateData, type EventData, type EventType } from "@gateway/events";
import type { SqlExecutor, TxRunner } from "./sql.js";

export type EmitOptions = { id?: string; requestId?: string };

export type Emit = <T extends EventType>(type: T, data: EventData<T>, options?: EmitOptions) => Promise<string>;

/**
 * Writes an event into the outbox inside the caller's transaction: it exists
 * if and only if that transaction commits. Returns the event id.
 */
export async function enqueueEvent<T extends EventType>(tx: SqlExecutor, type: T, data: EventData<T>, options: EmitOptions = {}): Promise<string> {
  const event = outboxRow(type, data, options);
  await tx.$executeRawUnsafe("INSERT INTO outbox_events (id, type, payload, request_id) VALUES ($1, $2, $3::jsonb, $4)", ...event.values);
  return event.id;
}

export type Transact<Tx extends SqlExecutor> = <R>(fn: (tx: Tx, emit: Emit) => Promise<R>) => Promise<R>;

/**
 * The one transaction helper of a service: `fn` gets the transaction and an
 * `emit` that writes events into it; after commit the relay is woken so the
 * events leave within milliseconds instead of at the next poll.
 */
export function createTransact<Tx extends SqlExecutor>(run: TxRunner<Tx>, relay?: { kick(): void }): Transact<Tx> {
  return async (fn) => {
    let emitted = false;
    const result = await run((tx) =>
      fn(tx, (type, data, options) => {
        emitted = true;
        return enqueueEvent(tx, type, data, options);
      }),
    );
    if (emitted) relay?.kick();
    return result;
  };
}

/** The four outbox columns of one event, validated, for a write that is a single statement. */
export type OutboxRow = { id: string; values: [id: string, type: string, payload: string, requestId: string | null] };

export function outboxRow<T extends EventType>(type: T, data: EventData<T>, options: EmitOptions = {}): OutboxRow {
  const id = options.id ?? newId("evt");
  return { id, values: [id, type, JSON.stringify(validateData(type, data)), options.requestId ?? currentRequestId() ?? null] };
}

/**
 * The CTE part that writes an event in the same statement as the change that
 * causes it, once per row of `source` (another CTE): no row, no event. The
 * event's four values are parameters `$first` .. `$first+3` (see `outboxRow`).
 *   WITH rec AS (UPDATE ... RETURNING id), ev AS (${outboxInsertFrom(7, "rec")}) SELECT ...
 */
export function outboxInsertFrom(first: number, source: string): string {
  return `INSERT INTO outbox_events (id, type, payload, request_id) SELECT $${first}::text, $${first + 1}::text, $${first + 2}::jsonb, $${first + 3}::text FROM ${source}`;
}

/**
 * Autocommit statements on the pool, for hot paths that write a change and its
 * events in one statement (one round trip, one commit) instead of a
 * BEGIN ... COMMIT conversation. `eventsWritten` wakes the relay.
 */
export type Statements = {
  /**
   * `name`: a named prepared statement (fixed text only): parsed once per connection and,
   * once PostgreSQL settles on a generic plan, planned once too (docs/decisions/0167).
   */
  query<R>(text: string, values: unknown[], name?: string): Promise<R[]>;
  eventsWritten(): void;
};

export function poolStatements(
  pool: { query(config: { text: string; values: unknown[]; name?: string }): Promise<{ rows: unknown[] }> },
  relay?: { kick(): void },
): Statements {
  return {
    query: async <R>(text: string, values: unknown[], name?: string) => (await pool.query(name ? { name, text, values } : { text, values })).rows as R[],
    eventsWritten: () => relay?.kick(),
  };
}
