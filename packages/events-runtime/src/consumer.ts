import { AckPolicy, DeliverPolicy, nanos, type ConsumerMessages, type JetStreamClient, type JetStreamManager, type JsMsg } from "nats";
import { newId } from "@gateway/contract/ids";
import { runWithContext, type Logger } from "@gateway/logger";
import { Counter, type Registry } from "@gateway/metrics";
import { InvalidEventError, parseEnvelope, type EventEnvelope, type EventType, type Subjects } from "@gateway/events";
import type { SqlExecutor, TxRunner } from "./sql.js";
import { CONSUME_EXPIRES_MS } from "./nats.js";
import { messageEnvelopes } from "./publish.js";
import { inConsumerSpan } from "./trace.js";

/**
 * Handles the new events of a batch, inside the transaction that records them as processed.
 * A handler of a checkpointing consumer may answer the ids it applied (the others were
 * duplicates by event id), for its metrics and logs; others ignore the answer.
 */
export type EventHandler<Tx extends SqlExecutor, T extends EventType> = (events: EventEnvelope<T>[], tx: Tx) => Promise<void | string[]>;

export type ConsumerOptions<Tx extends SqlExecutor, T extends EventType> = {
  js: JetStreamClient;
  jsm: JetStreamManager;
  subjects: Subjects;
  /** Durable name: the consumer's identity on NATS and in processed_events. */
  durable: string;
  /** Event types to receive; empty for all. */
  types: T[];
  runTx: TxRunner<Tx>;
  logger: Logger;
  registry?: Registry;
  handler: EventHandler<Tx, T>;
  maxDeliver?: number;
  ackWaitMs?: number;
  /** At most this many events per transaction. */
  maxBatch?: number;
  /**
   * Wait this long for more events before committing a batch that is not full:
   * at low rates the events of several requests then share one transaction
   * instead of one transaction each. 0 commits at once.
   */
  lingerMs?: number;
};

export type RunningConsumer = { stop(): Promise<void> };

/** Redelivery delay after a failed attempt: 1 s, 2 s, 4 s ... at most a minute. */
export function redeliveryDelayMs(attempt: number): number {
  return Math.min(60_000, 1_000 * 2 ** Math.max(0, attempt - 1));
}

/**
 * What both kinds of consumer (`startConsumer`, `startCheckpointConsumer`) begin with: the
 * batch size (`own.maxBatch` unless the options say) and linger, a logger named after the
 * consumer, its outcome counter when there is a registry, and the event types it wants
 * (`onlyType` when there is one).
 */
export function consumerSetup<T extends string>(
  options: { types: T[]; logger: Logger; registry?: Registry; maxBatch?: number; lingerMs?: number },
  own: { name: string; component: string; maxBatch: number; metric: string; help: string },
) {
  return {
    maxBatch: options.maxBatch ?? own.maxBatch,
    lingerMs: options.lingerMs ?? 0,
    log: options.logger.child({ component: own.component, consumer: own.name }),
    outcomes: options.registry
      ? new Counter({ name: own.metric, help: own.help, labelNames: ["consumer", "outcome"], registers: [options.registry] })
      : undefined,
    wanted: new Set<string>(options.types),
    onlyType: options.types.length === 1 ? options.types[0] : undefined,
  };
}

/**
 * The events of a stream message that a consumer wants (a batch carries several,
 * docs/decisions/0331), each checked by `parse`; `malformed` hears of every one that is not
 * an event, and of a message that is not JSON at all. `allMalformed`: the message held
 * something and none of it was an event.
 */
export function wantedEvents(
  subjects: Subjects,
  msg: { subject: string; data: Uint8Array },
  parse: (raw: unknown) => EventEnvelope,
  wanted: ReadonlySet<string>,
  malformed: (err: unknown) => void,
): { events: EventEnvelope[]; allMalformed: boolean } {
  let raw: unknown[];
  try {
    raw = messageEnvelopes(subjects, msg);
  } catch (err) {
    malformed(err);
    return { events: [], allMalformed: true };
  }
  const events: EventEnvelope[] = [];
  let bad = 0;
  for (const r of raw) {
    try {
      const event = parse(r);
      if (wanted.size === 0 || wanted.has(event.type)) events.push(event);
    } catch (err) {
      malformed(err);
      bad++;
    }
  }
  return { events, allMalformed: bad > 0 && bad === raw.length };
}

/** A message's acknowledgement waits for all its events (a batch carries several, docs/decisions/0331). */
type Carrier = { msg: JsMsg; left: number; failed: boolean };
type Parsed = { msg: JsMsg; event: EventEnvelope; carrier: Carrier };

/**
 * A durable JetStream consumer with exactly-once effects. Events are taken in
 * batches (whatever arrived while the previous batch was committing or within
 * `lingerMs`, up to `maxBatch`): one transaction records their ids in processed_events (duplicates
 * drop out: a redelivery, a relay re-publish) and runs the handler on the new
 * ones; every message is acknowledged after the commit. A failing batch is
 * retried one event at a time, so one bad event is nak'ed (with backoff) alone.
 * Malformed events are terminated. A message that is a batch of events (docs/decisions/0331)
 * is acknowledged once all its events are applied, and nak'ed whole when one failed: the
 * others drop out as duplicates when it comes back.
 */
export async function startConsumer<Tx extends SqlExecutor, T extends EventType>(options: ConsumerOptions<Tx, T>): Promise<RunningConsumer> {
  const { js, jsm, subjects, durable, runTx, handler } = options;
  const { maxBatch, lingerMs, log, outcomes, wanted, onlyType } = consumerSetup(options, {
    name: durable,
    component: "consumer",
    maxBatch: 200,
    metric: "events_consumed_total",
    help: "Events handled by durable consumers, by outcome.",
  });

  // NATS 2.9 (Debian's) has one filter subject per consumer: a single type is
  // filtered by the server, several are received under the wildcard and the
  // others acknowledged unseen.
  const config = {
    durable_name: durable,
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    ack_wait: nanos(options.ackWaitMs ?? 30_000),
    max_deliver: options.maxDeliver ?? 20,
    filter_subject: onlyType ? subjects.filterFor(onlyType) : subjects.all,
  };
  try {
    await jsm.consumers.add(subjects.stream, config);
  } catch (err) {
    if (!/already (exists|in use)/i.test(String((err as Error).message))) throw err;
    await jsm.consumers.update(subjects.stream, durable, {
      ack_wait: config.ack_wait,
      max_deliver: config.max_deliver,
      filter_subject: config.filter_subject,
    });
  }

  const consumer = await js.consumers.get(subjects.stream, durable);
  const messages: ConsumerMessages = await consumer.consume({ max_messages: Math.max(64, maxBatch), expires: CONSUME_EXPIRES_MS });
  const queue: JsMsg[] = [];
  let wake: (() => void) | undefined;
  let full: (() => void) | undefined;
  let ended = false;

  const reader = (async () => {
    for await (const msg of messages) {
      queue.push(msg);
      wake?.();
      if (queue.length >= maxBatch) full?.();
    }
  })()
    .catch((err: unknown) => log.error({ err }, "consumer stream ended"))
    .finally(() => {
      ended = true;
      wake?.();
      full?.();
    });

  /** The wanted events of a message; a message with none is acknowledged (or terminated, when nothing in it is an event) at once. */
  function parse(msg: JsMsg): Parsed[] {
    const { events, allMalformed } = wantedEvents(subjects, msg, parseEnvelope, wanted, (err) => {
      log.error({ err: err instanceof InvalidEventError ? err.message : String(err), subject: msg.subject }, "malformed event dropped");
      outcomes?.inc({ consumer: durable, outcome: "malformed" });
    });
    if (events.length === 0) {
      if (allMalformed) msg.term();
      else msg.ack();
      return [];
    }
    const carrier: Carrier = { msg, left: events.length, failed: false };
    return events.map((event) => ({ msg, event, carrier }));
  }

  /** One of a message's events is done with (or failed): the message is acknowledged, or nak'ed, after its last. */
  function finish(p: Parsed, failed: boolean, delayMs = 0): void {
    const c = p.carrier;
    c.failed ||= failed;
    if (--c.left > 0) return;
    if (c.failed) c.msg.nak(delayMs);
    else c.msg.ack();
  }

  async function commit(batch: Parsed[]): Promise<Set<string>> {
    return inConsumerSpan(
      durable,
      batch.map((p) => p.msg),
      () =>
        runTx(async (tx) => {
          const rows = await tx.$queryRawUnsafe<{ event_id: string }[]>(
            "INSERT INTO processed_events (consumer, event_id) SELECT $1, unnest($2::text[]) ON CONFLICT DO NOTHING RETURNING event_id",
            durable,
            batch.map((p) => p.event.id),
          );
          const fresh = new Set(rows.map((r) => r.event_id));
          const events = batch.filter((p, i) => fresh.has(p.event.id) && batch.findIndex((q) => q.event.id === p.event.id) === i).map((p) => p.event);
          if (events.length > 0) await handler(events as EventEnvelope<T>[], tx);
          return fresh;
        }),
    );
  }

  function settled(batch: Parsed[], fresh: Set<string>): void {
    for (const p of batch) finish(p, false);
    const debug = log.isLevelEnabled("debug");
    for (const p of batch) {
      const outcome = fresh.has(p.event.id) ? "processed" : "duplicate";
      outcomes?.inc({ consumer: durable, outcome });
      if (debug)
        runWithContext({ requestId: p.event.request_id ?? newId("req") }, () =>
          log.debug({ event_id: p.event.id, type: p.event.type, outcome }, "event handled"),
        );
      fresh.delete(p.event.id); // a second copy in the same batch is a duplicate
    }
  }

  async function handle(batch: Parsed[]): Promise<void> {
    try {
      settled(batch, await commit(batch));
    } catch (err) {
      if (batch.length > 1) {
        for (const p of batch) await handle([p]);
        return;
      }
      const [p] = batch as [Parsed];
      const attempt = p.msg.info.deliveryCount;
      outcomes?.inc({ consumer: durable, outcome: "failed" });
      runWithContext({ requestId: p.event.request_id ?? newId("req") }, () =>
        log.warn({ err, event_id: p.event.id, type: p.event.type, attempt }, "event handler failed; will be redelivered"),
      );
      finish(p, true, redeliveryDelayMs(attempt));
    }
  }

  const processor = (async () => {
    for (;;) {
      if (queue.length === 0) {
        if (ended) return;
        await new Promise<void>((resolve) => (wake = resolve));
        wake = undefined;
        continue;
      }
      if (lingerMs > 0 && queue.length < maxBatch && !ended) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, lingerMs);
          full = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        full = undefined;
      }
      const batch = queue.splice(0, maxBatch).flatMap(parse);
      if (batch.length > 0) await handle(batch);
    }
  })().catch((err: unknown) => log.error({ err }, "consumer loop ended"));

  return {
    async stop() {
      await messages.close();
      await reader;
      await processor;
    },
  };
}
