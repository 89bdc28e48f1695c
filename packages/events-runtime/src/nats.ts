import { connect, nanos, RetentionPolicy, StorageType, type JetStreamManager, type NatsConnection } from "nats";
import type { Subjects } from "@gateway/events";

export type { JetStreamClient, JetStreamManager, NatsConnection } from "nats";

/**
 * `noAsyncTraces`: without it nats.js builds two Error objects (a stack capture each) for
 * every request, a JetStream publish included, in case the request fails; that was
 * about 0.4 ms of CPU per metered call at one connection. A failed request still says
 * what failed (code and subject), without the caller's async stack.
 */
export async function connectNats(url: string, name: string): Promise<NatsConnection> {
  return connect({ servers: url, name, maxReconnectAttempts: -1, reconnectTimeWait: 1_000, timeout: 5_000, noAsyncTraces: true });
}

/**
 * How long each pull request of a JetStream consumer (`consume()`) waits on the server
 * before it is renewed; nats.js asks for idle heartbeats at half of it (at most 30 s) and
 * resets a consumer that missed two. Its default, 30 s, meant a renewal every 30 s and a
 * heartbeat every 15 s for each idle consumer, each waking the process and the server;
 * at 60 s both come half as often, and a pull the server lost is noticed within a minute
 * (a reconnect re-pulls at once, as before). Docs/decisions/0200.
 */
export const CONSUME_EXPIRES_MS = 60_000;

export const STREAM_MAX_AGE_MS = 7 * 24 * 3600 * 1000;
export const DUPLICATE_WINDOW_MS = 2 * 60 * 1000;

/**
 * Creates the namespace's event stream, or brings its subjects up to date.
 * Events are kept 7 days; JetStream drops a re-publish of the same event id
 * within 2 minutes (the relay's retry window).
 */
export async function ensureStream(jsm: JetStreamManager, subjects: Subjects): Promise<void> {
  const config = {
    name: subjects.stream,
    subjects: [subjects.all],
    retention: RetentionPolicy.Limits,
    storage: StorageType.File,
    max_age: nanos(STREAM_MAX_AGE_MS),
    duplicate_window: nanos(DUPLICATE_WINDOW_MS),
  };
  try {
    const info = await jsm.streams.info(subjects.stream);
    if (!info.config.subjects?.includes(subjects.all)) await jsm.streams.update(subjects.stream, { ...info.config, subjects: [subjects.all] });
  } catch (err) {
    if (!isNotFound(err)) throw err;
    try {
      await jsm.streams.add(config);
    } catch (addErr) {
      // Another service created it between our look and our add.
      if (!/already in use|exists/i.test(String((addErr as Error).message))) throw addErr;
    }
  }
}

export function isNotFound(err: unknown): boolean {
  const e = err as { code?: string; api_error?: { code?: number } } | undefined;
  return e?.code === "404" || e?.api_error?.code === 404 || /not found/i.test(String((err as Error)?.message));
}
