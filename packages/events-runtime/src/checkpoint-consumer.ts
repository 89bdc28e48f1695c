import { DeliverPolicy, type ConsumerMessages, type JetStreamClient, type JetStreamManager, type JsMsg } from "nats";
import { newId } from "@gateway/contract/ids";
import { runWithContext, type Logger } from "@gateway/logger";
import type { Registry } from "@gateway/metrics";
import { InvalidEventError, parseEnvelope, parseEnvelopeShape, type EventEnvelope, type EventType, type Subjects } from "@gateway/events";
import { consumerSetup, redeliveryDelayMs, wantedEvents, type EventHandler, type RunningConsumer } from "./consumer.js";
import { CONSUME_EXPIRES_MS } from "./nats.js";
import type { SqlExecutor, TxRunner } from "./sql.js";
import { inConsumerSpan } from "./trace.js";

export type CheckpointConsumerOptions<Tx extends SqlExecutor, T extends EventType> = {
  js: JetStreamClient;
  jsm: JetStreamManager;
  subjects: Subjects;
  /** The consumer's name: its row in consumer_checkpoints. */
  name: string;
  /** Event types to handle; empty for all. Others are passed over (the checkpoint moves past them). */
  types: T[];
  runTx: TxRunner<Tx>;
  logger: Logger;
  registry?: Registry;
  handler: EventHandler<Tx, T>;
  /** At most this many events per transaction. */
  maxBatch?: number;
  /** Wait this long for more events before committing a batch that is not full. */
  lingerMs?: number;
  /**
   * Check the envelope's shape only, not the payload against the catalog: for handlers
   * that store events as published (the audit trail; producers validated them).
   */
  trustPayloads?: boolean;
  /**
   * Called after each batch's transaction committed (the handler's effects are visible):
   * e.g. to wake a loop that works on rows the handler wrote.
   */
  afterCommit?: () => void;
};

const NAME = /^[A-Za-z0-9_-]{1,128}$/;

type Item = { seq: number; msg: JsMsg };

/**
 * A consumer that checkpoints instead of marking (docs/decisions/0162): it reads the
 * stream in order (an ordered JetStream consumer, no acknowledgements) from the
 * position after its checkpoint, and each batch's transaction runs the handler on
 * the batch's events AND moves `consumer_checkpoints.stream_seq` to the batch's last
 * stream sequence. No row per event. The checkpoint row is locked first, so if two
 * replicas read the same stream, each event is applied by one of them only.
 *
 * Exactly once per stream position: an event at or below the checkpoint is never
 * applied again (restarts, redeliveries), and none is skipped: events are applied in
 * stream order and a failing one is retried (with backoff) before any later one.
 * So a handler must fail only for transient reasons (a poison event would stop the
 * consumer; malformed envelopes are logged and passed over). A relay that re-publishes
 * an event after JetStream's duplicate window gives it a new position: handlers
 * dedupe by event id where that matters (the audit trail's key is the event id).
 *
 * A batch is three round trips: BEGIN with the checkpoint's lock (a prepared statement), the handler's
 * statement(s), and the checkpoint's update in the COMMIT's message (with a `runTx` from
 * `pgTransactions`). Its transactions may commit without waiting for the disk
 * (`pgTransactions(pool, { synchronousCommit: false })`, docs/decisions/0166): a
 * database crash then loses the last batches AND the checkpoint moves that recorded
 * them, together. If the checkpoint is found behind what this process applied, it
 * reads the stream again from the checkpoint, so the lost events are applied again.
 *
 * Needs the table `consumer_checkpoints (consumer TEXT PRIMARY KEY, stream_seq BIGINT NOT NULL)`.
 * Taking over from a durable consumer of the same name, it starts after that
 * consumer's acknowledged floor and deletes it.
 */
export async function startCheckpointConsumer<Tx extends SqlExecutor, T extends EventType>(
  options: CheckpointConsumerOptions<Tx, T>,
): Promise<RunningConsumer> {
  const { js, jsm, subjects, name, runTx, handler } = options;
  const { maxBatch, lingerMs, log, outcomes, wanted, onlyType } = consumerSetup(options, {
    name,
    component: "checkpoint-consumer",
    maxBatch: 500,
    metric: "events_checkpointed_total",
    help: "Events passed by checkpointing consumers, by outcome.",
  });
  const parseEvent = options.trustPayloads ? parseEnvelopeShape : parseEnvelope;
  // The name is inlined (checked here) so the lock rides with BEGIN and the update with COMMIT.
  if (!NAME.test(name)) throw new Error(`invalid consumer name ${name}`);
  const lockCheckpoint = `SELECT stream_seq FROM consumer_checkpoints WHERE consumer = '${name}' FOR UPDATE`;
  const lockName = `"checkpoint_lock_${name}"`;

  // Where to start: the stored checkpoint; else the acknowledged floor of a durable
  // consumer of the same name (the marking consumer this one replaces); else the start.
  let start = await runTx(async (tx) => {
    const rows = await tx.$queryRawUnsafe<{ stream_seq: bigint | string }[]>("SELECT stream_seq FROM consumer_checkpoints WHERE consumer = $1", name);
    return rows[0] ? Number(rows[0].stream_seq) : null;
  });
  if (start === null) {
    let floor = 0;
    try {
      const info = await jsm.consumers.info(subjects.stream, name);
      floor = info.ack_floor.stream_seq;
    } catch {
      // no such durable consumer
    }
    await runTx(async (tx) =>
      tx.$executeRawUnsafe("INSERT INTO consumer_checkpoints (consumer, stream_seq) VALUES ($1, $2) ON CONFLICT (consumer) DO NOTHING", name, floor),
    );
    start = floor;
  }
  await jsm.consumers.delete(subjects.stream, name).catch(() => undefined);

  const queue: Item[] = [];
  let wake: (() => void) | undefined;
  let full: (() => void) | undefined;
  let ended = false;
  let stopping = false;
  /** The stream position before the queue's first event: the last one applied or passed over. */
  let position = start;
  let messages: ConsumerMessages;
  let reader: Promise<void>;
  let generation = 0;

  /** Reads the stream in order from the position after `after`. */
  async function open(after: number): Promise<void> {
    const current = ++generation;
    const consumer = await js.consumers.get(subjects.stream, {
      filterSubjects: onlyType ? subjects.filterFor(onlyType) : subjects.all,
      // (nats.js 2.29: an explicit DeliverPolicy.All makes an ordered consumer deliver nothing; All is its default.)
      ...(after > 0 ? { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: after + 1 } : {}),
    });
    messages = await consumer.consume({ max_messages: Math.max(64, maxBatch), expires: CONSUME_EXPIRES_MS });
    ended = false;
    position = after;
    const source = messages;
    reader = (async () => {
      for await (const msg of source) {
        if (current !== generation) break;
        queue.push({ seq: msg.seq, msg });
        wake?.();
        if (queue.length >= maxBatch) full?.();
      }
    })()
      .catch((err: unknown) => log.error({ err }, "consumer stream ended"))
      .finally(() => {
        if (current !== generation) return;
        ended = true;
        wake?.();
        full?.();
      });
  }

  /** The checkpoint is behind this process's position (commits lost in a database crash): read again from it. */
  async function rewind(checkpoint: number): Promise<void> {
    log.warn({ checkpoint, position }, "checkpoint behind the events applied (commits lost?): reading the stream again from it");
    generation++;
    await messages.close();
    await reader;
    queue.length = 0;
    await open(checkpoint);
  }

  await open(start);

  /** The wanted events of a message (a batch carries several, docs/decisions/0331); malformed ones are logged and passed over. */
  function parse(item: Item): EventEnvelope[] {
    return wantedEvents(subjects, item.msg, parseEvent, wanted, (err) => {
      log.error(
        { err: err instanceof InvalidEventError ? err.message : String(err), subject: item.msg.subject, stream_seq: item.seq },
        "malformed event passed over",
      );
      outcomes?.inc({ consumer: name, outcome: "malformed" });
    }).events;
  }

  /**
   * Applies a batch (in stream order) and moves the checkpoint past it, in one transaction.
   * Answers how many events were applied, or `{ rewind }` when the checkpoint is behind
   * the position this process read from (then nothing is written).
   */
  async function commit(batch: Item[]): Promise<number | { rewind: number }> {
    type Outcome = { rewind: number } | { events: EventEnvelope[]; applied: Set<string> | null };
    return inConsumerSpan(
      name,
      batch.map((i) => i.msg),
      () =>
        runTx<Outcome>(async (tx) => {
          type Row = { stream_seq: bigint | string };
          const [row] = await (tx.$queryPrepared ? tx.$queryPrepared<Row[]>(lockName, lockCheckpoint) : tx.$queryRawUnsafe<Row[]>(lockCheckpoint));
          const checkpoint = Number(row?.stream_seq ?? 0);
          if (checkpoint < position) return { rewind: checkpoint };
          const fresh = batch.filter((i) => i.seq > checkpoint);
          if (fresh.length === 0) return { events: [], applied: null };
          const events = fresh.flatMap(parse);
          // A handler may answer the ids it applied (the others were duplicates by event id).
          const result: unknown = events.length > 0 ? await handler(events as EventEnvelope<T>[], tx) : undefined;
          const update = `UPDATE consumer_checkpoints SET stream_seq = ${fresh[fresh.length - 1]!.seq}, updated_at = now() WHERE consumer = '${name}'`;
          if (tx.commitWith) tx.commitWith(update);
          else await tx.$executeRawUnsafe(update);
          return { events, applied: Array.isArray(result) ? new Set(result as string[]) : null };
        }),
    ).then((outcome): number | { rewind: number } => {
      if ("rewind" in outcome) return outcome;
      const { events, applied } = outcome;
      if (events.length > 0) options.afterCommit?.();
      position = batch[batch.length - 1]!.seq;
      let processed = 0;
      const debug = log.isLevelEnabled("debug");
      for (const e of events) {
        const result = applied === null || applied.delete(e.id) ? "processed" : "duplicate";
        if (result === "processed") processed++;
        else outcomes?.inc({ consumer: name, outcome: result });
        if (debug)
          runWithContext({ requestId: e.request_id ?? newId("req") }, () => log.debug({ event_id: e.id, type: e.type, outcome: result }, "event handled"));
      }
      return processed;
    });
  }

  function sleep(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      full = () => {
        clearTimeout(timer);
        resolve();
      };
    }).then(() => {
      full = undefined;
    });
  }

  const processor = (async () => {
    let failures = 0;
    while (!stopping) {
      if (queue.length === 0) {
        if (ended) return;
        await new Promise<void>((resolve) => (wake = resolve));
        wake = undefined;
        continue;
      }
      if (lingerMs > 0 && queue.length < maxBatch && !ended && failures === 0) await sleep(lingerMs);
      const batch = queue.slice(0, maxBatch);
      try {
        const applied = await commit(batch);
        if (typeof applied !== "number") {
          await rewind(applied.rewind);
          continue;
        }
        queue.splice(0, batch.length);
        outcomes?.inc({ consumer: name, outcome: "processed" }, applied);
        failures = 0;
      } catch (err) {
        // Apply what comes before the failing event, one by one, then wait and retry from it.
        let done = 0;
        if (batch.length > 1) {
          for (const item of batch) {
            try {
              if (typeof (await commit([item])) !== "number") break; // rewinds at the next try
              done++;
            } catch {
              break;
            }
          }
        }
        queue.splice(0, done);
        failures++;
        outcomes?.inc({ consumer: name, outcome: "failed" });
        log.warn({ err, stream_seq: queue[0]?.seq, attempt: failures }, "event handler failed; retrying it before any later event");
        if (!stopping) await sleep(redeliveryDelayMs(failures));
      }
    }
  })().catch((err: unknown) => log.error({ err }, "consumer loop ended"));

  return {
    async stop() {
      stopping = true;
      full?.();
      wake?.();
      await processor;
      await messages.close();
      await reader;
    },
  };
}
