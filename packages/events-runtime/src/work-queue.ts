import { AckPolicy, DeliverPolicy, nanos, type JetStreamClient, type JetStreamManager, type JsMsg } from "nats";
import { newId } from "@gateway/contract/ids";
import { runWithContext, type Logger } from "@gateway/logger";
import { Counter, type Registry } from "@gateway/metrics";
import { parseEnvelope, PUBLISHED_IN_BATCHES, type EventEnvelope, type EventType, type Subjects } from "@gateway/events";
import { redeliveryDelayMs, type RunningConsumer } from "./consumer.js";
import { CONSUME_EXPIRES_MS } from "./nats.js";

/** What the queue does with the message once its work returned: acknowledge it, or see it again after `delayMs`. */
export type WorkOutcome = { kind: "done" } | { kind: "later"; delayMs: number };

export type WorkQueueOptions<T extends EventType> = {
  js: JetStreamClient;
  jsm: JetStreamManager;
  subjects: Subjects;
  /** Durable name: the consumer's identity on NATS (replicas share its messages). */
  durable: string;
  /** The one event type this queue works on (filtered by the server). */
  type: T;
  /** Works at most this many messages at once (and asks the server for no more). */
  concurrency: number;
  /** A message neither acknowledged nor nak'ed within this time goes to another worker (default 30 s); `touch` extends it. */
  ackWaitMs?: number;
  /**
   * Deliveries of one message, `later` included, before it is given up (default: none, -1):
   * a message whose work failed on its last delivery is logged at error and terminated.
   */
  maxDeliver?: number;
  logger: Logger;
  registry?: Registry;
  /** With `registry`: a counter of the work by outcome (`done`, `later`, `failed`, `duplicate`, `malformed`, `given_up`), under this name. */
  metric?: { name: string; help: string };
  /** Fields that say which work a log line is about (e.g. the job's id), besides the event's id. */
  describe?: (event: EventEnvelope<T>) => Record<string, unknown>;
  /**
   * The work an event asks for. Must be idempotent: a message comes again if this process
   * dies before acknowledging it, and a relay may publish an event twice. `touch` tells
   * JetStream the work is still going (long calls).
   */
  work: (event: EventEnvelope<T>, delivery: { attempt: number; touch: () => void }) => Promise<WorkOutcome>;
};

/**
 * A work queue on a durable JetStream consumer (docs/decisions/0225): each message of
 * `type` is worked on by one worker of one replica at a time, at most `concurrency` at
 * once. A message is acknowledged only after its work returned `done`; `later` nak's it
 * with the delay the work asked for (the wait is kept by JetStream and survives restarts);
 * work that throws is nak'ed with a delay that grows with its deliveries (1 s, 2 s, 4 s …
 * at most a minute), and given up after `maxDeliver` deliveries when there is a bound. A
 * copy of a message in flight (the same event id) is acknowledged at once; the work's own
 * records dedupe what comes later. Malformed messages are terminated. On `stop`, messages
 * not started yet go back at once and the work under way is waited for.
 */
export async function startWorkQueue<T extends EventType>(options: WorkQueueOptions<T>): Promise<RunningConsumer> {
  const { js, jsm, subjects, durable } = options;
  const log = options.logger.child({ component: "work-queue", consumer: durable });
  const outcomes =
    options.metric && options.registry
      ? new Counter({ name: options.metric.name, help: options.metric.help, labelNames: ["outcome"], registers: [options.registry] })
      : undefined;
  const ackWait = nanos(options.ackWaitMs ?? 30_000);
  const maxDeliver = options.maxDeliver ?? -1;
  // A message is one piece of work: events that travel in batches (docs/decisions/0331) are facts, not work.
  if (PUBLISHED_IN_BATCHES.has(options.type)) throw new Error(`${options.type} is published in batches: not a work queue's type`);
  const filter = subjects.subject(options.type);
  try {
    await jsm.consumers.add(subjects.stream, {
      durable_name: durable,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      ack_wait: ackWait,
      max_deliver: maxDeliver,
      filter_subject: filter,
    });
  } catch (err) {
    if (!/already (exists|in use)/i.test(String((err as Error).message))) throw err;
    await jsm.consumers.update(subjects.stream, durable, { ack_wait: ackWait, max_deliver: maxDeliver, filter_subject: filter });
  }
  const consumer = await js.consumers.get(subjects.stream, durable);
  const messages = await consumer.consume({ max_messages: options.concurrency, expires: CONSUME_EXPIRES_MS });
  const decoder = new TextDecoder();
  const active = new Set<Promise<void>>();
  /** Event ids being worked on. */
  const inFlight = new Set<string>();
  let stopping = false;

  async function handle(msg: JsMsg): Promise<void> {
    let event: EventEnvelope<T>;
    try {
      event = parseEnvelope(JSON.parse(decoder.decode(msg.data))) as EventEnvelope<T>;
      if (event.type !== options.type) throw new Error(`unexpected event type ${event.type}`);
    } catch (err) {
      log.error({ err: String(err), subject: msg.subject }, "malformed event dropped");
      outcomes?.inc({ outcome: "malformed" });
      msg.term();
      return;
    }
    if (inFlight.has(event.id)) {
      msg.ack();
      outcomes?.inc({ outcome: "duplicate" });
      return;
    }
    inFlight.add(event.id);
    const attempt = msg.info.deliveryCount;
    await runWithContext({ requestId: event.request_id ?? newId("req") }, async () => {
      try {
        const outcome = await options.work(event, { attempt, touch: () => msg.working() });
        if (outcome.kind === "done") msg.ack();
        else msg.nak(outcome.delayMs);
        outcomes?.inc({ outcome: outcome.kind });
      } catch (err) {
        const fields = { err, event_id: event.id, ...options.describe?.(event), attempt };
        if (maxDeliver > 0 && attempt >= maxDeliver) {
          outcomes?.inc({ outcome: "given_up" });
          log.error(fields, "work failed on its last delivery; given up");
          msg.term();
        } else {
          outcomes?.inc({ outcome: "failed" });
          log.warn(fields, "work failed; will be retried");
          msg.nak(redeliveryDelayMs(attempt));
        }
      } finally {
        inFlight.delete(event.id);
      }
    });
  }

  const loop = (async () => {
    for await (const msg of messages) {
      if (stopping) {
        msg.nak();
        continue;
      }
      const task = handle(msg).finally(() => active.delete(task));
      active.add(task);
      while (active.size >= options.concurrency) await Promise.race(active);
    }
  })().catch((err: unknown) => log.error({ err }, "work queue stream ended"));

  return {
    async stop() {
      stopping = true;
      await messages.close();
      await loop;
      await Promise.allSettled(active);
    },
  };
}
