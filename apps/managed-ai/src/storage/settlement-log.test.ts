import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { poolStatements, tailedLog } from "@gateway/events-runtime";
import { createLogger } from "@gateway/logger";
import { freshDatabase, type FreshDatabase } from "@gateway/testkit";
import { recordToOpen } from "../testing/records.js";
import { settlementLogPruner, startSettlementLogPruning } from "./settlement-log.js";
import { UsageRecordWriter } from "./usage-records.js";

/**
 * The settlement log loses what the relay has published, and nothing else (docs/decisions/0281):
 * real records opened and settled by the writer, a real relay (tailedLog) publishing them,
 * on a database of its own.
 */
const PRISMA_DIR = fileURLToPath(new URL("../../prisma", import.meta.url));
let db: FreshDatabase;
let pool: FreshDatabase["pool"];
let writer: UsageRecordWriter;
let relay: ReturnType<typeof tailedLog>;
const logger = createLogger({ service: "prune-test", level: "silent" });

beforeAll(async () => {
  db = await freshDatabase({ prefix: "gw_test_mai_prune", prismaDir: PRISMA_DIR, poolSize: 4 });
  pool = db.pool;
  writer = new UsageRecordWriter(poolStatements(pool), logger, undefined);
  relay = tailedLog({ pool, log: "usage_record_events", checkpoint: "usage_record_events", order: "transaction" });
});
afterAll(() => db?.drop());

let n = 0;
/** Opens and settles `count` records (one settlement transaction each): their ids. */
async function settled(count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const id = `req_prune_${++n}`;
    await writer.open(recordToOpen({ id, tenantId: "ten_prune", apiKeyId: null, reservedUnits: 100n }));
    expect(await writer.settle({ id, status: "completed", errorCode: null, holdId: `hold_${id}`, finalUnits: 70n, usageJson: null })).toBe(true);
    ids.push(id);
  }
  return ids;
}
type Published = { request_id: string | null; type: string };
/** One relay round; `publish` sees what it publishes (and may fail). */
const round = (publish: (events: Published[]) => Promise<void> = async () => undefined) =>
  relay.round(500, (events) => publish(events as unknown as Published[]));
const logged = async (): Promise<string[]> =>
  (await pool.query<{ record_id: string }>("SELECT record_id FROM usage_record_settlements ORDER BY record_id")).rows.map((r) => r.record_id).sort();
const checkpoint = async (): Promise<bigint> =>
  BigInt((await pool.query<{ position: string }>("SELECT position::text FROM relay_checkpoints WHERE name = 'usage_record_events'")).rows[0]!.position);
const sorted = (ids: string[]) => [...ids].sort();

/** A pruning schedule that hears nothing from a relay and polls once a minute: rounds run at start, after a full round and after a failure; each one's deletions go to `rounds`. */
const withoutRelay = (rounds: number[]) => ({
  lingerMs: 20,
  pollMs: 60_000,
  maxPollMs: 60_000,
  onRound: (deleted: number) => rounds.push(deleted),
  relayMoved: () => () => undefined,
});
describe("pruning the settlement log", () => {
  it("deletes the published settlement events in bounded batches and keeps the unpublished ones and the records", async () => {
    const published = await settled(7);
    expect((await round()).published).toBe(14);
    const unpublished = await settled(3);
    expect(await logged()).toEqual(sorted([...published, ...unpublished]));

    // Bounded: 2 rows a statement, 2 statements a round.
    const pruner = settlementLogPruner(pool, { batch: 2, maxBatches: 2 });
    expect(await pruner.round()).toBe(4);
    expect(await pruner.round()).toBe(3);
    expect(await pruner.round()).toBe(0);
    expect(await logged()).toEqual(sorted(unpublished));
    // Everything at or behind the checkpoint went; everything after it is there.
    const { rows } = await pool.query<{ behind: number; ahead: number }>(
      `SELECT count(*) FILTER (WHERE seq <= $1)::int AS behind, count(*) FILTER (WHERE seq > $1)::int AS ahead FROM usage_record_settlements`,
      [(await checkpoint()).toString()],
    );
    expect(rows[0]).toEqual({ behind: 0, ahead: 3 });
    // The records stay, settled, with their own note of the settlement.
    const records = await pool.query<{ n: number }>("SELECT count(*)::int AS n FROM usage_records WHERE status = 'completed' AND settled_txid IS NOT NULL");
    expect(records.rows[0]!.n).toBe(10);

    // The relay still publishes what was not published, once pruned behind it.
    const next: Published[] = [];
    await round(async (events) => void next.push(...events));
    expect(sorted(next.filter((e) => e.type === "managed_ai.request_settled").map((e) => e.request_id!))).toEqual(sorted(unpublished));
    expect(await settlementLogPruner(pool).round()).toBe(3);
    expect(await logged()).toEqual([]);
  });

  it("keeps what a relay published but did not checkpoint (a crash in between): it goes again", async () => {
    const ids = await settled(4);
    const before = await checkpoint();
    // Published, then the process dies before the checkpoint moves: the round's transaction
    // rolls back, as it does when the connection goes.
    const sent: Published[] = [];
    await expect(
      round(async (events) => {
        sent.push(...events);
        throw new Error("crash after publish");
      }),
    ).rejects.toThrow("crash after publish");
    expect(sent.filter((e) => e.type === "managed_ai.request_settled")).toHaveLength(4);
    expect(await checkpoint()).toBe(before);
    expect(await settlementLogPruner(pool).round()).toBe(0);
    expect(await logged()).toEqual(sorted(ids));

    // The next round publishes them again (same event ids: JetStream and consumers drop the copy); then they may go.
    const again: Published[] = [];
    await round(async (events) => void again.push(...events));
    expect(sorted(again.filter((e) => e.type === "managed_ai.request_settled").map((e) => e.request_id!))).toEqual(sorted(ids));
    expect(await settlementLogPruner(pool).round()).toBe(4);
  });

  it("does not wait for, nor take, the events of a relay round under way", async () => {
    const old = await settled(2);
    await round();
    const inFlight = await settled(3);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let reading!: () => void;
    const read = new Promise<void>((resolve) => (reading = resolve));
    // A round that has read the 3 new events and holds the checkpoint row while it publishes.
    const running = round(async () => {
      reading();
      await held;
    });
    await read;
    // The committed checkpoint is still behind the 3: only the 2 old ones go, without waiting.
    expect(await settlementLogPruner(pool).round()).toBe(2);
    expect(await logged()).toEqual(sorted(inFlight));
    release();
    expect((await running).published).toBe(6);
    expect(await settlementLogPruner(pool).round()).toBe(3);
    expect(old).toHaveLength(2);
  });

  it("prunes a linger after this process's relay moved its checkpoint, also after backing off while idle (docs/decisions/0300)", async () => {
    const rounds: { at: number; deleted: number }[] = [];
    // Polls double from 30 ms while they find nothing; only the relay's commit explains a round soon after it.
    const pruning = startSettlementLogPruning(pool, logger, {
      lingerMs: 20,
      pollMs: 30,
      maxPollMs: 60_000,
      onRound: (deleted) => rounds.push({ at: Date.now(), deleted }),
    });
    try {
      // Idle: the wait grows (30, 60, ... ms); the loop has just begun a sleep of about 4 s.
      await expect.poll(() => pruning.nextPollMs(), { timeout: 20_000, interval: 5 }).toBeGreaterThanOrEqual(7_680);
      const idleRounds = rounds.length;
      expect(idleRounds).toBeLessThanOrEqual(9);
      expect(rounds.every((r) => r.deleted === 0)).toBe(true);

      const ids = await settled(3);
      await new Promise((r) => setTimeout(r, 100));
      // Settled but not published: nothing may go, and nothing woke the pruner.
      expect(rounds.length).toBe(idleRounds);
      expect(await logged()).toEqual(sorted(ids));
      const published = Date.now();
      expect((await round()).published).toBe(6);
      await expect.poll(logged, { timeout: 2_000, interval: 5 }).toEqual([]);
      const pruned = rounds.find((r) => r.deleted > 0)!;
      expect(pruned.deleted).toBe(3);
      expect(pruned.at - published).toBeLessThan(2_000);
      // Work found: the poll starts again from its shortest (30 ms), so more rounds follow well
      // within the 4 s the idle loop had still to sleep.
      const at = rounds.indexOf(pruned);
      await expect.poll(() => rounds.length, { timeout: 2_000, interval: 5 }).toBeGreaterThan(at + 2);
    } finally {
      await pruning.stop();
    }
    const after = rounds.length;
    await new Promise((r) => setTimeout(r, 150));
    expect(rounds.length).toBe(after);
  });

  it("takes a backlog in bounded rounds a linger apart, without waiting for the poll", async () => {
    await settled(5);
    await round();
    const rounds: number[] = [];
    // No notices from the relay: only the start and the backlog schedule rounds here.
    const pruning = startSettlementLogPruning(pool, logger, { batch: 2, maxBatches: 1, ...withoutRelay(rounds) });
    try {
      await expect.poll(logged, { timeout: 3_000, interval: 10 }).toEqual([]);
      expect(rounds).toEqual([2, 2, 1]);
    } finally {
      await pruning.stop();
    }
  });

  it("logs a failed round and tries again, and stops for good", async () => {
    await settled(2);
    await round();
    const rounds: number[] = [];
    const calls: string[] = [];
    let fail = true;
    const flaky = {
      query: async (text: string) => {
        calls.push(text);
        if (fail) {
          fail = false;
          throw new Error("database away");
        }
        return pool.query(text);
      },
    };
    const pruning = startSettlementLogPruning(flaky, logger, withoutRelay(rounds));
    try {
      // The first round (at start) fails; the retry comes within the loop's back-off (200 ms), not the minute's poll.
      await expect.poll(() => rounds, { timeout: 2_000 }).toEqual([2]);
      expect(await logged()).toEqual([]);
    } finally {
      await pruning.stop();
    }
    const after = calls.length;
    await new Promise((r) => setTimeout(r, 60));
    expect(calls.length).toBe(after);
  });
});
