import type { EventType } from "@gateway/events";
import { preparedStatement, type PoolLike } from "./pg.js";
import type { RelaySource } from "./relay.js";

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

export type TailedLogOptions = {
  /** Connections to the service's database (one per round, released after it). */
  pool: PoolLike;
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
   * (seq, id) order, and reports whether committed rows wait above it (`blocked`).
   */
  order?: "commit" | "transaction";
  /** Its row in `relay_checkpoints` (created at 0 if missing). */
  checkpoint: string;
};

/**
 * What this process's relays have committed, by checkpoint name: after a round of a tailed log
 * moved its checkpoint and committed, its listeners hear the new position. Work that acts
 * behind a relay (the settlement log's pruner, docs/decisions/0300) waits for this instead of
 * polling the checkpoint while nothing happens. A notice, not the truth: a listener still reads
 * the committed checkpoint itself, and hears nothing of other processes' relays (their own
 * listeners do), so it keeps a slow fallback poll for a replica that died in between.
 */
export class CheckpointMoves {
  private readonly listeners = new Map<string, Set<(position: bigint) => void>>();

  /** Calls `listener` after each commit that moved checkpoint `name`; answers a function that stops it. */
  on(name: string, listener: (position: bigint) => void): () => void {
    const set = this.listeners.get(name) ?? new Set();
    this.listeners.set(name, set);
    set.add(listener);
    return () => void set.delete(listener);
  }

  /** A relay committed checkpoint `name` at `position` (a listener that throws is ignored: it is only a notice). */
  emit(name: string, position: bigint): void {
    for (const listener of this.listeners.get(name) ?? []) {
      try {
        listener(position);
      } catch {
        // a notice; the listener's own poll covers it
      }
    }
  }
}

/** The process's one `CheckpointMoves`, which every `tailedLog` reports to. */
export const checkpointMoves = new CheckpointMoves();

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
 * The outbox without the outbox, as a relay's source: the rows a service already writes
 * (its event log), published in `seq` order, after which a checkpoint moves, instead of an
 * outbox row inserted per event and deleted again (docs/decisions/0161).
 *
 * A round: `BEGIN`, lock the checkpoint row (SKIP LOCKED: another replica's round
 * in progress means nothing to do here) and read the events after it, in one
 * message; publish them, then advance the checkpoint and COMMIT in one message. Rolled
 * back if a publish fails, so the same events go again. The commit does not wait for the
 * disk (losing it only re-publishes).
 */
export function tailedLog(options: TailedLogOptions): RelaySource {
  const { log, checkpoint, pool } = options;
  if (!IDENT.test(log)) throw new Error(`invalid log relation ${log}`);
  if (!IDENT.test(checkpoint)) throw new Error(`invalid checkpoint name ${checkpoint}`);
  const order = options.order ?? "commit";
  const byTransaction = order === "transaction";
  // Values inlined (a checked identifier and an integer): the round opens with BEGIN and
  // this select in one simple-protocol message, one round trip instead of two.
  const statement = `log_relay_${checkpoint}`;
  let select: { batchSize: number; text: string } | undefined;
  let ensured = false;
  return {
    batchSize: 500,
    logBindings: { component: "log-relay", log },
    messages: { failed: "log relay round failed; retrying", finalFlushFailed: "final log relay flush failed; the events go at the next start" },
    metrics: {
      published: { name: "log_relay_published_total", help: "Events published by tailing the event log." },
      rounds: { name: "log_relay_rounds_total", help: "Log relay rounds that published (events per round = published ÷ rounds)." },
      failures: { name: "log_relay_failures_total", help: "Failed log relay rounds." },
      lastBatch: { name: "log_relay_last_round_size", help: "Events in the last log relay round." },
    },
    spanAttributes: { "gateway.relay.log": log },
    async round(batchSize, publish) {
      if (select?.batchSize !== batchSize) select = { batchSize, text: logRelaySelect(log, checkpoint, batchSize, order) };
      const client = await pool.connect();
      let open = false;
      try {
        if (!ensured) {
          await client.query("INSERT INTO relay_checkpoints (name, position) VALUES ($1, 0) ON CONFLICT (name) DO NOTHING", [checkpoint]);
          ensured = true;
        }
        open = true;
        // The select is the session's prepared statement: parsed and planned once per connection
        // (planned again by PostgreSQL after each ANALYZE of the log's tables; decision 0167).
        const results = (await client.query(`BEGIN; ${LOG_RELAY_SETTINGS}; ${preparedStatement(client, statement, select.text)}`)) as unknown as {
          rows: LogRow[];
        }[];
        const { rows } = results[results.length - 1]!;
        const events = rows.filter((r) => r.id !== null);
        // No row at all: another replica's round holds the checkpoint.
        const blocked = byTransaction ? rows.length === 0 || rows[0]!.blocked === true : undefined;
        await publish(events);
        open = false;
        // The checkpoint moves to the last published event; values inlined (a bigint and a
        // checked identifier) so the update and the commit are one message.
        const last = events.length > 0 ? BigInt(events[events.length - 1]!.seq) : undefined;
        await client.query(
          last === undefined ? "COMMIT" : `UPDATE relay_checkpoints SET position = ${last.toString()}, updated_at = now() WHERE name = '${checkpoint}'; COMMIT`,
        );
        client.release();
        if (last !== undefined) checkpointMoves.emit(checkpoint, last);
        return blocked === undefined ? { published: events.length } : { published: events.length, blocked };
      } catch (err) {
        if (open) {
          try {
            await client.query("ROLLBACK");
          } catch {
            // the connection is discarded below
          }
        }
        // Whether the PREPARE of a failed message ran is unknown: a new connection next time.
        client.release(true);
        throw err;
      }
    },
  };
}
