import { isEventType, validateData } from "@gateway/events";

/**
 * Event rows a test read back (an outbox, a view over a service's log), each checked
 * against the event catalog: an unknown type or a payload off its schema throws.
 */
export function catalogChecked<R extends { type: string; payload: Record<string, unknown> }>(rows: R[]): R[] {
  for (const row of rows) {
    if (!isEventType(row.type)) throw new Error(`unknown event type ${row.type}`);
    validateData(row.type, row.payload as never);
  }
  return rows;
}
