import type { Logger } from "@gateway/logger";
import { Counter, Gauge, type Registry } from "@gateway/metrics";
import type { Span } from "@gateway/telemetry";
import { BatchLoop } from "./batch-loop.js";
import type { JsPublish } from "./js-publisher.js";
import { publishStored, type StoredEvent } from "./publish.js";
import type { SqlExecutor, TxRunner } from "./sql.js";
import type { Subjects } from "@gateway/events";
import { endRelaySpan, inRelaySpan } from "./trace.js";

/**
 * Where a relay reads its events: the outbox table (`outboxTable`) or a log the service
 * writes anyway, tailed by a checkpoint (`tailedLog`, docs/decisions/0161 and 0205).
 */
export type RelaySource = {
  /** Its default batch size. */
  readonly batchSize: number;
  /** Fields of the relay's log lines (its component). */
  readonly logBindings: Record<string, string>;
  /** Log lines: a failed round (retried with backoff) and a failed final flush. */
  readonly messages: { failed: string; finalFlushFailed: string };
  /** Metric names and help texts (the names the two relays have always had). */
  readonly metrics: Record<"published" | "rounds" | "failures" | "lastBatch", { name: string; help: string }>;
  /** Attributes of a publishing round's span. */
  readonly spanAttributes?: Record<string, string>;
  /**
   * One round, in one transaction of the source: read at most `batchSize` events (or, for a
   * log by transaction id, whole transactions), call `publish` with them (possibly none; it
   * resolves once JetStream acknowledged every one, and throws otherwise), then make them
   * gone for good (the outbox deletes them, a log moves its checkpoint) and commit. Anything
   * that fails rolls the round back, so the same events go again. Answers how many events it
   * published and, for a source that can tell, whether committed events wait that it could
   * not read yet (`blocked`).
   */
  round(batchSize: number, publish: (events: readonly StoredEvent[]) => Promise<void>): Promise<{ published: number; blocked?: boolean }>;
};

export type RelayOptions = {
  /** Where the events come from. */
  from: RelaySource;
  /** Where events are published: a `JetStreamPublisher` (or a `JetStreamClient`). */
  js: JsPublish;
  subjects: Subjects;
  /** The publishing service, written into every envelope. */
  source: string;
  logger: Logger;
  registry?: Registry;
  /** Fallback scan interval for events no `kick` announced (other replicas, crashes). */
  pollMs?: number;
  /** While polls find nothing, the interval doubles up to this (default `pollMs`). */
  maxPollMs?: number;
  /**
   * After a kick, wait this long before publishing, so the events of the next
   * few commits leave in the same batch (one transaction, one round of acks)
   * instead of one batch each. 0 publishes at once.
   */
  lingerMs?: number;
  /** Above `lingerMs`: the linger grows as the rate falls, up to this (see `BatchLoop`). */
  maxLingerMs?: number;
  /** Default: the source's (100 for the outbox, 500 for a log). */
  batchSize?: number;
  publishTimeoutMs?: number;
  /**
   * While the source reports events it cannot read yet (a log by transaction id behind a
   * running transaction, or another replica's round holding the checkpoint): retry after
   * this, doubling up to 200 ms (default 5), not at the next poll.
   */
  blockedRetryMs?: number;
};

/**
 * Moves committed events to JetStream: one relay whatever the source (docs/decisions/0225).
 * A round reads a batch in a transaction of the source, publishes it (event id as the
 * JetStream message id, in the source's order), and only then makes the events gone
 * (outbox rows deleted, a log's checkpoint moved) and commits. A failed publish or commit
 * rolls the round back and the same events go again; a crash between the acks and the
 * commit re-publishes them, which JetStream drops within its duplicate window and the
 * consumers dedupe beyond it. Replicas share a source without publishing an event twice
 * at the same time (the outbox's rows and a log's checkpoint are locked SKIP LOCKED).
 *
 * The schedule is `BatchLoop`'s: a round after each kick (once the linger is over), one
 * per poll otherwise (backing off while idle), the next at once while rounds come back
 * full, exponential backoff after a failure; `stop` publishes what is left.
 */
export class Relay {
  private readonly batchSize: number;
  private readonly publishTimeoutMs: number;
  private readonly source: RelaySource;
  private readonly published?: Counter;
  private readonly rounds?: Counter;
  private readonly failures?: Counter;
  private readonly lastBatch?: Gauge;
  private readonly schedule: BatchLoop;
  private blockedRounds = 0;

  constructor(private readonly options: RelayOptions) {
    this.source = options.from;
    this.batchSize = options.batchSize ?? this.source.batchSize;
    if (!Number.isSafeInteger(this.batchSize) || this.batchSize < 1) throw new Error(`invalid batch size ${this.batchSize}`);
    this.publishTimeoutMs = options.publishTimeoutMs ?? 5_000;
    const log = options.logger.child(this.source.logBindings);
    if (options.registry) {
      const { metrics } = this.source;
      const registers = [options.registry];
      this.published = new Counter({ ...metrics.published, registers });
      this.rounds = new Counter({ ...metrics.rounds, registers });
      this.failures = new Counter({ ...metrics.failures, registers });
      this.lastBatch = new Gauge({ ...metrics.lastBatch, registers });
    }
    this.schedule = new BatchLoop({
      round: () => this.round(),
      batchSize: this.batchSize,
      pollMs: options.pollMs ?? 500,
      ...(options.maxPollMs !== undefined ? { maxPollMs: options.maxPollMs } : {}),
      lingerMs: options.lingerMs ?? 0,
      ...(options.maxLingerMs !== undefined ? { maxLingerMs: options.maxLingerMs } : {}),
      log,
      messages: this.source.messages,
      onFailure: () => this.failures?.inc(),
    });
  }

  start(): void {
    this.schedule.start();
  }

  /** Something was committed: publish soon (after the linger) rather than at the next poll. */
  kick(): void {
    this.schedule.kick();
  }

  /** Publishes until the source is caught up (or an error stops it). Returns the count. */
  flush(): Promise<number> {
    return this.schedule.flush();
  }

  /** Stops the loop, then publishes what is left. */
  stop(): Promise<void> {
    return this.schedule.stop();
  }

  /**
   * Events committed but not yet readable: try again shortly, not at the next poll, so an
   * event still leaves within milliseconds of the transaction that held it back.
   */
  private retryIfBlocked(blocked: boolean): void {
    if (!blocked) {
      this.blockedRounds = 0;
      return;
    }
    const wait = Math.min(200, (this.options.blockedRetryMs ?? 5) * 2 ** Math.min(this.blockedRounds, 8));
    this.blockedRounds++;
    this.schedule.wakeBy(Date.now() + wait);
  }

  /** One round; returns how many events it published. */
  private async round(): Promise<number> {
    const { js, subjects, source } = this.options;
    const startedAt = Date.now();
    let span: Span | undefined;
    try {
      const { published, blocked } = await this.source.round(this.batchSize, async (events) => {
        this.lastBatch?.set(events.length);
        if (events.length === 0) return;
        const publishAll = () => publishStored(js, subjects, source, events, this.publishTimeoutMs);
        ({ span } = await inRelaySpan(`publish ${subjects.stream}`, startedAt, events.length, subjects.stream, publishAll));
        if (this.source.spanAttributes) span.setAttributes(this.source.spanAttributes);
      });
      if (blocked !== undefined) this.retryIfBlocked(blocked);
      if (span) endRelaySpan(span);
      if (published > 0) {
        this.published?.inc(published);
        this.rounds?.inc();
      }
      return published;
    } catch (err) {
      // A failed publish has ended the span already; a failed commit ends it here.
      if (span) endRelaySpan(span, err);
      throw err;
    }
  }
}

type OutboxRow = StoredEvent & { seq: bigint | string };

/**
 * The transactional outbox as a relay's source: rows of `outbox_events`, taken with
 * SKIP LOCKED so replicas share them, deleted in the round's transaction (the deletion
 * commits only if every publish was acknowledged). `runTx` may commit without waiting
 * for the disk (`pgTransactions(pool, { synchronousCommit: false })`): losing a round in
 * a crash only publishes its rows again.
 */
export function outboxTable(options: { runTx: TxRunner<SqlExecutor> }): RelaySource {
  return {
    batchSize: 100,
    logBindings: { component: "outbox-relay" },
    messages: { failed: "outbox publish failed; retrying", finalFlushFailed: "final outbox flush failed; events stay in the outbox for the next start" },
    metrics: {
      published: { name: "outbox_published_total", help: "Events published from the outbox." },
      rounds: { name: "outbox_batches_total", help: "Outbox batches published (events per batch = published ÷ batches)." },
      failures: { name: "outbox_publish_failures_total", help: "Failed outbox publish batches." },
      lastBatch: { name: "outbox_last_batch_size", help: "Rows in the last outbox batch." },
    },
    async round(batchSize, publish) {
      // Taken out of the table at once; the deletion commits only if every publish was
      // acknowledged (an error rolls it back). No parameters (the batch size is a checked
      // integer): the statement rides with BEGIN. `seq` arrives as text from pg (as a bigint
      // from Prisma): compared as numbers, so that 99 goes before 100. A prepared statement
      // where the runner offers one: parsed and planned once per connection (a plan
      // PostgreSQL makes again after each ANALYZE of the table).
      const take = `DELETE FROM outbox_events WHERE seq IN (SELECT seq FROM outbox_events ORDER BY seq LIMIT ${batchSize} FOR UPDATE SKIP LOCKED)
             RETURNING seq, id, type, payload, request_id, created_at`;
      const published = await options.runTx(async (tx) => {
        const rows = (
          await (tx.$queryPrepared ? tx.$queryPrepared<OutboxRow[]>(`outbox_take_${batchSize}`, take) : tx.$queryRawUnsafe<OutboxRow[]>(take))
        ).sort((a, b) => (BigInt(a.seq) < BigInt(b.seq) ? -1 : 1));
        await publish(rows);
        return rows.length;
      });
      return { published };
    },
  };
}
