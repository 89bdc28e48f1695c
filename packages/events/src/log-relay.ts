import type { Logger } from "@gateway/logger";
import { Counter, type Registry } from "@gateway/metrics";
import type { EventType } from "./catalog.js";
import { preparedStatement, type PoolLike } from "./pg.js";
import { BatchLoop } from "./batch-loop.js";
import type { JsPublish } from "./js-publisher.js";
import { publishStored } from "./publish.js";
import type { Subjects } from "./subjects.js";
import { endRelaySpan, inRelaySpan } from "./trace.js";
import type { Span } from "@gateway/telemetry";

/** One event of the log, as the source relation presents it. */
type LogRow = {
  seq: bigint | string | number;
  id: string;
  type: EventType;
  payload: unknown;
  request_id: string | null;
  created_at: Date;
  checkpoint: bigint | string | number | null;
  /** order "transaction" only: committed rows wait above the horizon. */
  blocked?: boolean;
};

export type LogRelayOptions = {
  /** Connections to the service's database (one per round, released after it). */
  pool: PoolLike;
  /** Where events are published: a `JetStreamPublisher` (or a `JetStreamClient`). */
  js: JsPublish;
  subjects: Subjects;
  /** The publishing service, written into every envelope. */
  source: string;
  /**
   * A table or view with columns `seq, id, type, payload, request_id, created_at`,
   * one row per event, whose `seq` only ever grows IN COMMIT ORDER: a row that
   * becomes visible never has a smaller seq than one already visible (e.g. seq
   * assigned under a lock held to commit, as the ledger's transfers do). A plain
   * bigserial does not qualify: a transaction that took 5 may commit after the one
   * that took 6, and the relay would move past 5 for good. With `order:
   * "transaction"`, seq is instead the id of the transaction that wrote the row.
   */
  log: string;
  /**
   * How `seq` is ordered. "commit" (default): unique, and growing in commit order.
   * "transaction": the writing transaction's id (`pg_current_xact_id()`), shared by the
   * rows of one transaction, with no lock anywhere (docs/decisions/0205): a round reads
   * only rows of transactions older than the oldest one of this database still running
   * (`HORIZON`: nothing can commit below it any more), whole transactions at a time, in
   * (seq, id) order.
   */
  order?: "commit" | "transaction";
  /** With order "transaction": while rows wait behind a running transaction (or another replica's round), retry after this, doubling up to 200 ms (default 5). */
  blockedRetryMs?: number;
  /** Its row in `relay_checkpoints` (created at 0 if missing). */
  checkpoint: string;
  logger: Logger;
  registry?: Registry;
  /** Fallback scan interval (other replicas, crashes). */
  pollMs?: number;
  /** While polls find nothing, the interval doubles up to this (default `pollMs`). */
  maxPollMs?: number;
  /** After a kick, wait this long so the next commits' events leave in the same round. */
  lingerMs?: number;
  /** Above `lingerMs`: the linger grows as the rate falls, up to this (see `BatchLoop`). */
  maxLingerMs?: number;
  batchSize?: number;
  publishTimeoutMs?: number;
};

const IDENT = /^[a-z_][a-z0-9_]*$/;
/**
 * A round's settings. Its commit does not wait for the disk (losing it only re-publishes).
 * No sequential scans: the select is prepared once per connection and its plan kept until
 * PostgreSQL invalidates it, and a plan made while the log's tables were empty (a new
 * database) would otherwise read the whole table every round until the next ANALYZE.
 */
export const LOG_RELAY_SETTINGS = "SET LOCAL synchronous_commit = off; SET LOCAL enable_seqscan = off";
/**
 * The horizon of a log positioned by transaction id: the oldest transaction of this
 * database still running at the statement's snapshot (or the next to start). Below it every
 * transaction that could have written here has ended, so no row can appear there later. The
 * snapshot's in-progress list is the whole server's; transactions that the backends' status
 * shows running in another database are left out (they cannot write here), so a long write
 * in another service's database does not hold this log back. A transaction not found there
 * (ended since, prepared, or hidden from an unprivileged role) counts: the horizon stays
 * below it, which only delays.
 */
const HORIZON = `least(pg_snapshot_xmax(pg_current_snapshot())::text::bigint,
    (SELECT min(x::text::bigint) FROM pg_snapshot_xip(pg_current_snapshot()) AS x
     WHERE xid(x) NOT IN (SELECT a.backend_xid FROM pg_stat_get_activity(NULL) a
       WHERE a.backend_xid IS NOT NULL AND a.datid <> (SELECT oid FROM pg_database WHERE datname = current_database()))))`;

/**
 * A round's select (exported for the plan tests of the services' logs): the checkpoint
 * row locked, the events after it, and with order "transaction" whether rows wait above
 * the horizon. Identifiers must be checked before they get here (the constructor does).
 */
export function logRelaySelect(log: string, checkpoint: string, batchSize: number, order: "commit" | "transaction"): string {
  const cp = `cp AS (SELECT position FROM relay_checkpoints WHERE name = '${checkpoint}' FOR UPDATE SKIP LOCKED)`;
  return order === "transaction"
    ? // Below the horizon (`HORIZON`) no row can appear any more. One
      // index range scan from the checkpoint finds the batch's end (a transaction's last row)
      // and whether committed rows wait at or above the horizon (`blocked`). The bounds are
      // scalar subqueries and a stable function, not joins, so that each branch of a log made
      // of several relations is an index range scan, also in a plan made on empty tables.
      `WITH ${cp}, h AS (SELECT ${HORIZON} AS x),
      head AS (SELECT l.seq FROM ${log} l WHERE l.seq > (SELECT position FROM cp) ORDER BY l.seq LIMIT ${batchSize}),
      upto AS (SELECT max(head.seq) FILTER (WHERE head.seq < h.x) AS seq, coalesce(bool_or(head.seq >= h.x), false) AS blocked FROM head CROSS JOIN h)
    SELECT cp.position AS checkpoint, e.seq, e.id, e.type, e.payload, e.request_id, e.created_at, (SELECT blocked FROM upto) AS blocked
    FROM cp LEFT JOIN LATERAL (SELECT * FROM ${log} l WHERE l.seq > cp.position AND l.seq <= (SELECT seq FROM upto) ORDER BY l.seq, l.id) e ON true`
    : `WITH ${cp}
    SELECT cp.position AS checkpoint, e.seq, e.id, e.type, e.payload, e.request_id, e.created_at
    FROM cp LEFT JOIN LATERAL (SELECT * FROM ${log} WHERE seq > cp.position ORDER BY seq LIMIT ${batchSize}) e ON true`;
}

/**
 * The outbox without the outbox: publishes the rows a service already writes (its
 * event log) in `seq` order and then advances a checkpoint, instead of inserting an
 * outbox row per event and deleting it again (docs/decisions/0161).
 *
 * A round: `BEGIN`, lock the checkpoint row (SKIP LOCKED: another replica's round
 * in progress means nothing to do here) and read the events after it, in one
 * message; publish them (event id as JetStream message id), advance the
 * checkpoint and COMMIT in one message. Rolled back if a publish fails, so the same
 * events go again. A crash after the acks and before the commit re-publishes them:
 * JetStream drops copies within its duplicate window, consumers dedupe beyond it.
 * The commit does not wait for the disk (losing it only re-publishes).
 */
export class LogRelay {
  private readonly batchSize: number;
  private readonly publishTimeoutMs: number;
  private readonly log: Logger;
  private readonly select: string;
  private readonly statement: string;
  private readonly published?: Counter;
  private readonly rounds?: Counter;
  private readonly failures?: Counter;
  private readonly schedule: BatchLoop;
  private readonly byTransaction: boolean;
  private blockedRounds = 0;
  private ensured = false;

  constructor(private readonly options: LogRelayOptions) {
    if (!IDENT.test(options.log)) throw new Error(`invalid log relation ${options.log}`);
    if (!IDENT.test(options.checkpoint)) throw new Error(`invalid checkpoint name ${options.checkpoint}`);
    this.batchSize = options.batchSize ?? 500;
    this.publishTimeoutMs = options.publishTimeoutMs ?? 5_000;
    this.log = options.logger.child({ component: "log-relay", log: options.log });
    if (!Number.isSafeInteger(this.batchSize) || this.batchSize < 1) throw new Error(`invalid batch size ${this.batchSize}`);
    // Values inlined (a checked identifier and an integer): the round opens with BEGIN and
    // this select in one simple-protocol message, one round trip instead of two.
    this.statement = `log_relay_${options.checkpoint}`;
    this.byTransaction = options.order === "transaction";
    this.select = logRelaySelect(options.log, options.checkpoint, this.batchSize, options.order ?? "commit");
    if (options.registry) {
      this.published = new Counter({ name: "log_relay_published_total", help: "Events published by tailing the event log.", registers: [options.registry] });
      this.rounds = new Counter({
        name: "log_relay_rounds_total",
        help: "Log relay rounds that published (events per round = published ÷ rounds).",
        registers: [options.registry],
      });
      this.failures = new Counter({ name: "log_relay_failures_total", help: "Failed log relay rounds.", registers: [options.registry] });
    }
    this.schedule = new BatchLoop({
      round: () => this.round(),
      batchSize: this.batchSize,
      pollMs: options.pollMs ?? 500,
      ...(options.maxPollMs !== undefined ? { maxPollMs: options.maxPollMs } : {}),
      lingerMs: options.lingerMs ?? 0,
      ...(options.maxLingerMs !== undefined ? { maxLingerMs: options.maxLingerMs } : {}),
      log: this.log,
      messages: { failed: "log relay round failed; retrying", finalFlushFailed: "final log relay flush failed; the events go at the next start" },
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

  /** Publishes until the log is caught up (or an error stops it). Returns the count. */
  flush(): Promise<number> {
    return this.schedule.flush();
  }

  /** Stops the loop, then publishes what is left. */
  stop(): Promise<void> {
    return this.schedule.stop();
  }

  /**
   * Rows committed but not yet readable (a transaction older than theirs still runs), or
   * another replica's round holding the checkpoint: try again shortly, not at the next
   * poll, so an event still leaves within milliseconds of the transaction that blocked it.
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
    const startedAt = Date.now();
    const client = await this.options.pool.connect();
    let open = false;
    let span: Span | undefined;
    try {
      if (!this.ensured) {
        await client.query("INSERT INTO relay_checkpoints (name, position) VALUES ($1, 0) ON CONFLICT (name) DO NOTHING", [this.options.checkpoint]);
        this.ensured = true;
      }
      open = true;
      // The select is the session's prepared statement: parsed and planned once per connection
      // (planned again by PostgreSQL after each ANALYZE of the log's tables; decision 0167).
      const results = (await client.query(`BEGIN; ${LOG_RELAY_SETTINGS}; ${preparedStatement(client, this.statement, this.select)}`)) as unknown as {
        rows: LogRow[];
      }[];
      const { rows } = results[results.length - 1]!;
      const events = rows.filter((r) => r.id !== null);
      if (this.byTransaction) this.retryIfBlocked(rows.length === 0 || rows[0]!.blocked === true);
      if (events.length === 0) {
        open = false;
        await client.query("COMMIT");
        client.release();
        return 0;
      }
      const { js, subjects, source } = this.options;
      const publishAll = () => publishStored(js, subjects, source, events, this.publishTimeoutMs);
      ({ span } = await inRelaySpan(`publish ${subjects.stream}`, startedAt, events.length, subjects.stream, publishAll));
      span.setAttribute("gateway.relay.log", this.options.log);
      const last = BigInt(events[events.length - 1]!.seq);
      open = false;
      // Values inlined (a bigint and a checked identifier) so the update and the commit are one message.
      await client.query(`UPDATE relay_checkpoints SET position = ${last.toString()}, updated_at = now() WHERE name = '${this.options.checkpoint}'; COMMIT`);
      client.release();
      endRelaySpan(span);
      this.published?.inc(events.length);
      this.rounds?.inc();
      return events.length;
    } catch (err) {
      // A failed publish has ended the span already; a failed commit ends it here.
      if (span) endRelaySpan(span, err);
      if (open) {
        try {
          await client.query("ROLLBACK");
          // Whether the PREPARE of a failed message ran is unknown: a new connection next time.
          client.release(true);
        } catch {
          client.release(true);
        }
      } else {
        client.release(true);
      }
      throw err;
    }
  }
}
