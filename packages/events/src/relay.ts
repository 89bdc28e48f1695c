import type { Logger } from "@gateway/logger";
import { Counter, Gauge, type Registry } from "@gateway/metrics";
import type { EventType } from "./catalog.js";
import type { SqlExecutor, TxRunner } from "./sql.js";
import { BatchLoop } from "./batch-loop.js";
import type { JsPublish } from "./js-publisher.js";
import { publishStored } from "./publish.js";
import type { Subjects } from "./subjects.js";
import { endRelaySpan, inRelaySpan } from "./trace.js";
import type { Span } from "@gateway/telemetry";

type OutboxRow = {
  seq: bigint | string;
  id: string;
  type: EventType;
  payload: unknown;
  request_id: string | null;
  created_at: Date;
};

export type RelayOptions = {
  /**
   * Transactions for the relay's batches. They may commit without waiting for the
   * disk (`pgTransactions(pool, { synchronousCommit: false })`): losing one in a crash
   * only publishes its rows again, which JetStream and the consumers drop as duplicates.
   */
  runTx: TxRunner<SqlExecutor>;
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
  batchSize?: number;
  publishTimeoutMs?: number;
};

/**
 * Moves committed outbox rows to JetStream. Rows are locked with SKIP LOCKED,
 * so replicas share the work without publishing a row twice at the same time;
 * a row is deleted only after JetStream acknowledged it. A crash between the
 * ack and the delete re-publishes the row: JetStream's duplicate window (keyed
 * by event id) drops it, and consumers dedupe by event id beyond that window.
 */
export class OutboxRelay {
  private readonly batchSize: number;
  private readonly publishTimeoutMs: number;
  private readonly log: Logger;
  private readonly published?: Counter;
  private readonly batches?: Counter;
  private readonly failures?: Counter;
  private readonly backlog?: Gauge;
  private readonly schedule: BatchLoop;

  constructor(private readonly options: RelayOptions) {
    this.batchSize = options.batchSize ?? 100;
    if (!Number.isSafeInteger(this.batchSize) || this.batchSize < 1) throw new Error(`invalid batch size ${this.batchSize}`);
    this.publishTimeoutMs = options.publishTimeoutMs ?? 5_000;
    this.log = options.logger.child({ component: "outbox-relay" });
    if (options.registry) {
      this.published = new Counter({ name: "outbox_published_total", help: "Events published from the outbox.", registers: [options.registry] });
      this.batches = new Counter({
        name: "outbox_batches_total",
        help: "Outbox batches published (events per batch = published ÷ batches).",
        registers: [options.registry],
      });
      this.failures = new Counter({ name: "outbox_publish_failures_total", help: "Failed outbox publish batches.", registers: [options.registry] });
      this.backlog = new Gauge({ name: "outbox_last_batch_size", help: "Rows in the last outbox batch.", registers: [options.registry] });
    }
    this.schedule = new BatchLoop({
      round: () => this.publishBatch(),
      batchSize: this.batchSize,
      pollMs: options.pollMs ?? 500,
      ...(options.maxPollMs !== undefined ? { maxPollMs: options.maxPollMs } : {}),
      lingerMs: options.lingerMs ?? 0,
      ...(options.maxLingerMs !== undefined ? { maxLingerMs: options.maxLingerMs } : {}),
      log: this.log,
      messages: { failed: "outbox publish failed; retrying", finalFlushFailed: "final outbox flush failed; events stay in the outbox for the next start" },
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

  /** Publishes until the outbox is empty (or an error stops it). Returns the count. */
  flush(): Promise<number> {
    return this.schedule.flush();
  }

  /** Stops the loop, then publishes what is left. */
  stop(): Promise<void> {
    return this.schedule.stop();
  }

  private async publishBatch(): Promise<number> {
    const { js, subjects, source } = this.options;
    const startedAt = Date.now();
    let span: Span | undefined;
    try {
      const published = await this.options.runTx(async (tx) => {
        // Taken out of the table at once; the deletion commits only if every
        // publish was acknowledged (an error rolls it back).
        // No parameters (the batch size is a checked integer): the statement rides with BEGIN.
        // `seq` arrives as text from pg (as a bigint from Prisma): compared as numbers, so that
        // 99 goes before 100.
        // A prepared statement where the runner offers one: parsed and planned once per
        // connection (a plan PostgreSQL makes again after each ANALYZE of the table).
        const take = `DELETE FROM outbox_events WHERE seq IN (SELECT seq FROM outbox_events ORDER BY seq LIMIT ${this.batchSize} FOR UPDATE SKIP LOCKED)
             RETURNING seq, id, type, payload, request_id, created_at`;
        const rows = (
          await (tx.$queryPrepared ? tx.$queryPrepared<OutboxRow[]>(`outbox_take_${this.batchSize}`, take) : tx.$queryRawUnsafe<OutboxRow[]>(take))
        ).sort((a, b) => (BigInt(a.seq) < BigInt(b.seq) ? -1 : 1));
        this.backlog?.set(rows.length);
        if (rows.length === 0) return 0;
        const publishAll = () => publishStored(js, subjects, source, rows, this.publishTimeoutMs);
        ({ span } = await inRelaySpan(`publish ${subjects.stream}`, startedAt, rows.length, subjects.stream, publishAll));
        this.published?.inc(rows.length);
        this.batches?.inc();
        return rows.length;
      });
      if (span) endRelaySpan(span);
      return published;
    } catch (err) {
      // A failed publish has ended the span already; a failed commit ends it here.
      if (span) endRelaySpan(span, err);
      throw err;
    }
  }
}
