import { PUBLISHED_IN_BATCHES, type EventType } from "./catalog.js";

/** The part of an event type before its first dot (`ledger` of `ledger.posted`). */
export function typePrefix(type: string): string {
  const dot = type.indexOf(".");
  return dot < 0 ? type : type.slice(0, dot);
}

/**
 * Names on NATS, all under one namespace so several stacks (or test runs) can
 * share a server: stream `<ns>_events`, subjects `<ns>.events.<event type>`.
 */
export type Subjects = {
  namespace: string;
  stream: string;
  all: string;
  subject(type: EventType): string;
  /**
   * Where a batch of the events of one type prefix goes (`managed_ai`, `ledger`): events
   * in `PUBLISHED_IN_BATCHES` travel only in batches (docs/decisions/0331).
   */
  batch(prefix: string): string;
  /** Whether a stream message is a batch (a JSON array of envelopes). */
  isBatch(subject: string): boolean;
  /** The subject a consumer of one type alone reads: the type's, or its prefix's batch subject. */
  filterFor(type: EventType): string;
  /** Core-NATS subject for cache invalidation broadcasts (not persisted). */
  broadcast(topic: string): string;
};

export function subjectsFor(namespace: string): Subjects {
  if (!/^[A-Za-z0-9_]{1,32}$/.test(namespace)) throw new Error(`invalid NATS namespace ${namespace}`);
  const subject = (type: string) => `${namespace}.events.${type}`;
  const batch = (prefix: string) => `${namespace}.events.${prefix}.batch`;
  return {
    namespace,
    stream: `${namespace}_events`,
    all: `${namespace}.events.>`,
    subject,
    batch,
    isBatch: (subject) => subject.endsWith(".batch"),
    filterFor: (type) => (PUBLISHED_IN_BATCHES.has(type) ? batch(typePrefix(type)) : subject(type)),
    broadcast: (topic) => `${namespace}.broadcast.${topic}`,
  };
}
