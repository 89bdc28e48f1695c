import { GroupCommit } from "@gateway/db-kit";
import type { EventData, EventType } from "@gateway/events";
import { outboxRow, type OutboxRow } from "@gateway/events-runtime";

type Pool = { query(text: string, values: unknown[]): Promise<unknown> };

/**
 * The outbox write of an event that changes no row of its own (a key's denials,
 * docs/decisions/0250): the event is its own transaction. Writes that arrive while
 * earlier ones commit wait and go together, one INSERT of many rows (group commit), so
 * a flood of refused requests costs a statement per batch, not one per request. The
 * event is built (checked against the catalog, given its request id) when it is
 * emitted, in the request's context; the relay is woken after each commit.
 */
export function loneEvents(options: { pool: Pool; relay: { kick(): void }; maxBatch?: number }) {
  const writes = new GroupCommit<OutboxRow, string>({
    maxBatch: options.maxBatch ?? 200,
    isolateFailures: false,
    run: async (rows) => {
      const tuples = rows.map((_, i) => `($${4 * i + 1}, $${4 * i + 2}, $${4 * i + 3}::jsonb, $${4 * i + 4})`);
      await options.pool.query(
        `INSERT INTO outbox_events (id, type, payload, request_id) VALUES ${tuples.join(", ")}`,
        rows.flatMap((r) => r.values),
      );
      options.relay.kick();
      return rows.map((r) => r.id);
    },
  });
  return async <T extends EventType>(type: T, data: EventData<T>): Promise<string> => writes.submit(outboxRow(type, data));
}
