import { AsyncLocalStorage } from "node:async_hooks";

/**
 * What travels with one request through a process: HTTP handler, gRPC calls it
 * makes (as metadata), events it writes (as NATS headers), and every log line.
 */
export type RequestContext = {
  requestId: string;
  /** Who acts: `user:<id>` for a session, `key:<id>` for an API key, `system:<name>` for background work. */
  actor?: string;
};

const storage = new AsyncLocalStorage<RequestContext>();

export function runWithContext<T>(context: RequestContext, fn: () => T): T {
  return storage.run(context, fn);
}

export function currentContext(): RequestContext | undefined {
  return storage.getStore();
}

export function currentRequestId(): string | undefined {
  return storage.getStore()?.requestId;
}

export function currentActor(): string | undefined {
  return storage.getStore()?.actor;
}

/** Records the authenticated caller on the current request context. */
export function setActor(actor: string): void {
  const store = storage.getStore();
  if (store) store.actor = actor;
}
