/**
 * The events package's contract part (`@gateway/events/contract`): what an event is (the
 * catalog of types and payloads, the envelope) and where it travels (the subjects). It
 * imports no runtime (NATS, PostgreSQL, loops); the rest of the package (outbox, relay,
 * consumers, work queue, `BatchLoop`) is the runtime part, exported from the package root
 * together with this (docs/decisions/0225).
 */
export { EVENT_CATALOG, EVENT_TYPES, InvalidEventError, isEventType, parseEnvelope, parseEnvelopeShape, validateData } from "./catalog.js";
export type { EventData, EventEnvelope, EventType } from "./catalog.js";
export { subjectsFor, type Subjects } from "./subjects.js";
