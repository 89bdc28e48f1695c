import { BatchLoop, checkpointMoves } from "@gateway/events-runtime";
import type { Logger } from "@gateway/logger";

/** What pruning runs on: the pool (one message a batch, its own transaction). */
export type PruneSql = { query(text: string): Promise<unknown> };

/**
 * Deletes up to `limit` events of the settlement log (usage_record_settlements) at or behind the
 * position the relay has published up to, after `from`, oldest first, and answers how many
 * and the position of the last one it deleted (docs/decisions/0281). One message: its own
 * transaction, planned without sequential scans (the log's key is the only sensible path,
 * also while the log has no statistics); the values are a bigint and an integer, inlined.
 *
 * Nothing unpublished goes: the relay moves its checkpoint only after it published, in the
 * transaction that read the events (a crash in between leaves it behind, and those events go
 * again); it reads only below the oldest running transaction, so no event ever appears at or
 * behind its checkpoint later; this statement reads the committed checkpoint. Its commit
 * waits for the disk (the pool's default): it flushes the WAL up to its own commit record,
 * so the relay's checkpoint commit it read (written without waiting) is durable with it.
 * Rows another pruner is deleting are skipped, not waited for.
 */
export const pruneSettlements = (from: bigint, limit: number): string => `BEGIN; SET LOCAL enable_seqscan = off;
  WITH cp AS (SELECT position FROM relay_checkpoints WHERE name = 'usage_record_events'),
  gone AS (
    SELECT s.seq, s.record_id FROM usage_record_settlements s
    WHERE s.seq > ${BigInt(from).toString()} AND s.seq <= (SELECT position FROM cp)
    ORDER BY s.seq, s.record_id LIMIT ${Math.trunc(limit)} FOR UPDATE SKIP LOCKED),
  del AS (
    DELETE FROM usage_record_settlements s USING gone g WHERE s.seq = g.seq AND s.record_id = g.record_id
    RETURNING s.seq)
  SELECT count(*)::int AS deleted, max(seq)::text AS last FROM del;
  COMMIT`;

export type PruneOptions = {
  /** Rows a statement deletes at most (one transaction each). */
  batch?: number;
  /** Statements a round runs at most, so one round stays short whatever the backlog. */
  maxBatches?: number;
};

/**
 * Drops what the relay has published from the settlement log, in bounded batches: a round
 * deletes `batch` rows a statement until fewer are left, or `maxBatches` ran. Answers the
 * rows deleted. Each batch starts its range scan of the log's key where the previous one
 * ended (the dead index entries behind it are vacuum's); each round from the beginning, so
 * rows another pruner skipped (locked) are found again.
 */
export function settlementLogPruner(sql: PruneSql, options: PruneOptions = {}): { round(): Promise<number> } {
  const batch = options.batch ?? 5_000;
  const maxBatches = options.maxBatches ?? 20;
  return {
    async round() {
      // Positions are transaction ids (> 0); seeded history sits below 0 (bench/src/seed.ts).
      let from = -(2n ** 62n);
      let total = 0;
      for (let i = 0; i < maxBatches; i++) {
        const results = (await sql.query(pruneSettlements(from, batch))) as { rows: { deleted: number; last: string | null }[] }[];
        const { deleted, last } = results[2]!.rows[0]!;
        total += deleted;
        if (last !== null) from = BigInt(last) - 1n;
        if (deleted < batch) break;
      }
      return total;
    },
  };
}

export type PruningSchedule = {
  /**
   * After the relay committed a new checkpoint in this process, prune this much later (the
   * rows of the rounds in between go in the same statement). Under load a round every
   * `lingerMs`; after the last event, the log is empty `lingerMs` later.
   */
  lingerMs: number;
  /**
   * The fallback poll, for rows this process's relay did not announce (another replica's
   * relay that died before its own pruner ran): after a round that deleted rows, this; while
   * rounds find nothing, it doubles up to `maxPollMs`.
   */
  pollMs: number;
  maxPollMs: number;
  /** Called after each round that ran to the end, with the rows it deleted (tests, metrics). */
  onRound?: (deleted: number) => void;
  /**
   * Subscribes to the commits of this process's relay of the log (answers how to stop
   * listening). Default: `checkpointMoves` of checkpoint `usage_record_events`.
   */
  relayMoved?: (listener: () => void) => () => void;
};

/**
 * Prunes the settlement log behind the relay (docs/decisions/0281, 0300) on a `BatchLoop`: a
 * round at start (what a crash left), one `lingerMs` after the relay of this process moved its
 * checkpoint, and otherwise a poll that backs off from `pollMs` to `maxPollMs` while it finds
 * nothing. An idle service wakes for it once every `maxPollMs`, not every few seconds.
 * A round that fails is logged and retried (backing off up to 5 s); `stop` waits for a round
 * under way. Each replica runs one (batches skip what another is deleting).
 */
export function startSettlementLogPruning(
  sql: PruneSql,
  logger: Logger,
  options: PruneOptions & PruningSchedule,
): { stop(): Promise<void>; runNow(): Promise<number>; nextPollMs(): number } {
  const pruner = settlementLogPruner(sql, options);
  const fullRound = (options.batch ?? 5_000) * (options.maxBatches ?? 20);
  let current: Promise<number> | undefined;
  // One round at a time, whether the loop or `runNow` asks.
  const round = (): Promise<number> => {
    current ??= pruner
      .round()
      .then((deleted) => {
        options.onRound?.(deleted);
        // A backlog: the next bounded round a linger later, not at the next poll.
        if (deleted >= fullRound) loop.wakeBy(Date.now() + options.lingerMs);
        return deleted;
      })
      .finally(() => {
        current = undefined;
      });
    return current;
  };
  const loop = new BatchLoop({
    round,
    // A round is bounded by `maxBatches` statements and never counts as full here: a backlog
    // (a relay that was down) goes `batch × maxBatches` rows a linger (above), off the request path.
    batchSize: Number.MAX_SAFE_INTEGER,
    pollMs: options.pollMs,
    maxPollMs: Math.max(options.pollMs, options.maxPollMs),
    lingerMs: options.lingerMs,
    flushOnStop: false,
    log: logger,
    messages: {
      failed: "pruning the settlement log failed; the next round tries again",
      finalFlushFailed: "pruning the settlement log failed at stop; the next start prunes",
    },
  });
  const relayMoved = options.relayMoved ?? ((listener: () => void) => checkpointMoves.on("usage_record_events", listener));
  const stopListening = relayMoved(() => loop.kick());
  loop.start();
  return {
    runNow: round,
    nextPollMs: () => loop.nextPollMs,
    async stop() {
      stopListening();
      await loop.stop();
      await current?.catch(() => undefined);
    },
  };
}
