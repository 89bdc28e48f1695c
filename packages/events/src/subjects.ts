import type { EventType } from "./catalog.js";

/**
 * Names on NATS, all under one namespace so several stacks (or test runs) can
 * share a server: stream `<ns>_events`, subjects `<ns>.events.<event type>`.
 */
export type Subjects = {
  namespace: string;
  stream: string;
  all: string;
  subject(type: EventType): string;
  /** Core-NATS subject for cache invalidation broadcasts (not persisted). */
  broadcast(topic: string): string;
};

export function subjectsFor(namespace: string): Subjects {
  if (!/^[A-Za-z0-9_]{1,32}$/.test(namespace)) throw new Error(`invalid NATS namespace ${namespace}`);
  return {
    namespace,
    stream: `${namespace}_events`,
    all: `${namespace}.events.>`,
    subject: (type) => `${namespace}.events.${type}`,
    broadcast: (topic) => `${namespace}.broadcast.${topic}`,
  };
}
