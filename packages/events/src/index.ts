/**
 * The events contract (`@gateway/events`): what an event is (the catalog of types and
 * payloads, the envelope) and where it travels (the subjects). It imports zod and nothing
 * else: no NATS, no PostgreSQL, no loop. The runtime that moves events (outbox, relay,
 * consumers, work queue, `BatchLoop`) is `@gateway/events-runtime` (docs/decisions/0260).
 */
export {
  EVENT_CATALOG,
  EVENT_TYPES,
  KEPT_AT_SOURCE,
  PUBLISHED_IN_BATCHES,
  InvalidEventError,
  isEventType,
  parseEnvelope,
  parseEnvelopeShape,
  validateData,
} from "./catalog.js";
export type { EventData, EventEnvelope, EventType } from "./catalog.js";
export { subjectsFor, typePrefix, type Subjects } from "./subjects.js";
