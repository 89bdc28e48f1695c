import type { JetStreamClient } from "nats";
import type { Logger } from "@gateway/logger";
import { Counter, Gauge, type Registry } from "@gateway/metrics";
import type { EventEnvelope, EventType } from "./catalog.js";
import type { SqlExecutor, TxRunner } from "./sql.js";
import { publishEnvelope } from "./publish.js";
import type { Subjects } from "./subjects.js";

type OutboxRow = {
  seq: bigint;
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
  js: JetStreamClient;
  subjects: Subjects;
  /** The publishing service, written into every envelope. */
  source: string;
  logger: Logger;
  registry?: Registry;
  /** Fallback scan interval for events no `kick` announced (other replicas, crashes). */
  pollMs?: number;
  /**
   * After a kick, wait this long before publishing, so the events of the next
   * few commits leave in the same batch (one transaction, one round of acks)
   * instead of one batch each. 0 publishes at once.
   */
  lingerMs?: number;
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
  private readonly pollMs: number;
  private readonly lingerMs: number;
  private lingerTimer: NodeJS.Timeout | undefined;
  private readonly batchSize: number;
  private readonly publishTimeoutMs: number;
  private readonly log: Logger;
  private readonly published?: Counter;
  private readonly batches?: Counter;
  private readonly failures?: Counter;
  private readonly backlog?: Gauge;
  private running = false;
  private loopDone: Promise<void> = Promise.resolve();
  private wake: (() => void) | undefined;
  private kicked = false;

  constructor(private readonly options: RelayOptions) {
    this.pollMs = options.pollMs ?? 500;
    this.lingerMs = options.lingerMs ?? 0;
    this.batchSize = options.batchSize ?? 100;
    this.publishTimeoutMs = options.publishTimeoutMs ?? 5_000;
    this.log = options.logger.child({ component: "outbox-relay" });
    if (options.registry) {
      this.published = new Counter({ name: "outbox_published_total", help: "Events published from the outbox.", registers: [options.registry] });
      this.batches = new Counter({ name: "outbox_batches_total", help: "Outbox batches published (events per batch = published ÷ batches).", registers: [options.registry] });
      this.failures = new Counter({ name: "outbox_publish_failures_total", help: "Failed outbox publish batches.", registers: [options.registry] });
      this.backlog = new Gauge({ name: "outbox_last_batch_size", help: "Rows in the last outbox batch.", registers: [options.registry] });
    }
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loopDone = this.loop();
  }

  /** Something was committed: publish soon (after the linger) rather than at the next poll. */
  kick(): void {
    this.kicked = true;
    if (this.lingerMs === 0) {
      this.wake?.();
      return;
    }
    this.lingerTimer ??= setTimeout(() => {
      this.lingerTimer = undefined;
      this.wake?.();
    }, this.lingerMs);
  }

  /** Publishes until the outbox is empty (or an error stops it). Returns the count. */
  async flush(): Promise<number> {
    let total = 0;
    for (;;) {
      const n = await this.publishBatch();
      total += n;
      if (n < this.batchSize) return total;
    }
  }

  /** Stops the loop, then publishes what is left. */
  async stop(): Promise<void> {
    this.running = false;
    clearTimeout(this.lingerTimer);
    this.lingerTimer = undefined;
    this.wake?.();
    await this.loopDone;
    try {
      await this.flush();
    } catch (err) {
      this.log.warn({ err }, "final outbox flush failed; events stay in the outbox for the next start");
    }
  }

  private async loop(): Promise<void> {
    let failures = 0;
    while (this.running) {
      this.kicked = false;
      let published = 0;
      try {
        published = await this.publishBatch();
        failures = 0;
      } catch (err) {
        failures++;
        this.failures?.inc();
        this.log.warn({ err, failures }, "outbox publish failed; retrying");
        await this.sleep(Math.min(5_000, 100 * 2 ** Math.min(failures, 6)));
        continue;
      }
      // Kicked while publishing, and the linger already over: go again at once.
      if (published === this.batchSize || (this.kicked && !this.lingerTimer)) continue;
      await this.sleep(this.pollMs);
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      const self = this;
      function done() {
        clearTimeout(timer);
        self.wake = undefined;
        resolve();
      }
      this.wake = done;
    });
  }

  private async publishBatch(): Promise<number> {
    const { js, subjects, source } = this.options;
    return this.options.runTx(async (tx) => {
      // Taken out of the table at once; the deletion commits only if every
      // publish was acknowledged (an error rolls it back).
      const rows = (
        await tx.$queryRawUnsafe<OutboxRow[]>(
          `DELETE FROM outbox_events WHERE seq IN (SELECT seq FROM outbox_events ORDER BY seq LIMIT $1 FOR UPDATE SKIP LOCKED)
           RETURNING seq, id, type, payload, request_id, created_at`,
          this.batchSize,
        )
      ).sort((a, b) => (a.seq < b.seq ? -1 : 1));
      this.backlog?.set(rows.length);
      if (rows.length === 0) return 0;
      await Promise.all(
        rows.map((row) =>
          publishEnvelope(
            js,
            subjects,
            {
              id: row.id,
              type: row.type,
              source,
              occurred_at: row.created_at.toISOString(),
              request_id: row.request_id,
              data: row.payload as EventEnvelope["data"],
            },
            this.publishTimeoutMs,
          ),
        ),
      );
      this.published?.inc(rows.length);
      this.batches?.inc();
      return rows.length;
    });
  }
}
