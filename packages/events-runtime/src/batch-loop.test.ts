import { afterEach, describe, expect, it, vi } from "vitest";
import { createLogger } from "@gateway/logger";
import { BatchLoop, type BatchLoopOptions } from "./batch-loop.js";

const log = createLogger({ service: "batch-loop-test", level: "silent" });

/** A loop whose rounds are recorded (with the fake clock's time) and answer from `work`. */
function recorded(options: Partial<BatchLoopOptions> & { work?: () => number } = {}) {
  const rounds: number[] = [];
  const loop = new BatchLoop({
    round: async () => {
      rounds.push(Date.now());
      return options.work?.() ?? 0;
    },
    batchSize: 10,
    pollMs: 100,
    lingerMs: 0,
    log,
    messages: { failed: "failed", finalFlushFailed: "final flush failed" },
    ...options,
  });
  return { loop, rounds };
}

/** Lets the fake clock run `ms`, settling promises between timers. */
async function advance(ms: number) {
  await vi.advanceTimersByTimeAsync(ms);
}

describe("BatchLoop", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("polls at a fixed interval when no longest interval is given", async () => {
    vi.useFakeTimers({ now: 0 });
    const { loop, rounds } = recorded();
    loop.start();
    await advance(1_000);
    await loop.stop();
    // One at start, then every 100 ms; stop flushes once more.
    expect(rounds.slice(0, 11)).toEqual([0, 100, 200, 300, 400, 500, 600, 700, 800, 900, 1000]);
  });

  it("doubles the wait while polls find nothing, up to the longest interval", async () => {
    vi.useFakeTimers({ now: 0 });
    const { loop, rounds } = recorded({ maxPollMs: 1_000, flushOnStop: false });
    loop.start();
    await advance(5_000);
    await loop.stop();
    expect(rounds).toEqual([0, 100, 300, 700, 1500, 2500, 3500, 4500]);
  });

  it("is back at the shortest interval after a kick or after finding work", async () => {
    vi.useFakeTimers({ now: 0 });
    let found = 0;
    const { loop, rounds } = recorded({ maxPollMs: 1_600, flushOnStop: false, work: () => (found-- > 0 ? 1 : 0) });
    loop.start();
    await advance(3_100); // 0, 100, 300, 700, 1500, 3100: the wait is at 1,600
    expect(rounds.at(-1)).toBe(3100);
    loop.kick(); // a commit: a round at once, then polls from 100 ms again
    await advance(0);
    expect(rounds.at(-1)).toBe(3100);
    expect(rounds.length).toBe(7);
    await advance(350);
    expect(rounds.slice(6)).toEqual([3100, 3200, 3400]);
    found = 1; // work another replica left: the next poll finds it, and polls stay short
    await advance(800);
    expect(rounds.slice(9)).toEqual([3800, 3900, 4000, 4200]);
    await loop.stop();
  });

  it("runs a round by the time announced work falls due, however long the idle wait has grown", async () => {
    vi.useFakeTimers({ now: 0 });
    const { loop, rounds } = recorded({ maxPollMs: 60_000, flushOnStop: false });
    loop.start();
    await advance(12_700); // 0, 100, 300, 700, 1500, 3100, 6300, 12700: now sleeping 12.8 s
    expect(rounds.at(-1)).toBe(12_700);
    loop.wakeBy(13_000); // a retry due in 300 ms
    loop.wakeBy(20_000); // a later one does not push the earlier one back
    await advance(300);
    expect(rounds.at(-1)).toBe(13_000);
    // The later retry is still announced: the next round comes by 20 s, not at 13 s + 25.6 s.
    await advance(7_000);
    expect(rounds.at(-1)).toBe(20_000);
    await loop.stop();
  });

  it("does not flush on stop when told not to (deliveries that call out)", async () => {
    vi.useFakeTimers({ now: 0 });
    const flushing = recorded({ work: () => 0 });
    flushing.loop.start();
    await advance(0);
    await flushing.loop.stop();
    expect(flushing.rounds).toEqual([0, 0]);
    const quiet = recorded({ work: () => 0, flushOnStop: false });
    quiet.loop.start();
    await advance(0);
    await quiet.loop.stop();
    expect(quiet.rounds).toEqual([0]);
  });

  it("lets the linger grow while kicked rounds carry little (a low rate) and shrink again when they fill", async () => {
    vi.useFakeTimers({ now: 0 });
    let pending = 0;
    const { loop, rounds } = recorded({
      pollMs: 60_000,
      lingerMs: 5,
      maxLingerMs: 40,
      batchSize: 40,
      flushOnStop: false,
      work: () => {
        const n = pending;
        pending = 0;
        return n;
      },
    });
    loop.start();
    await advance(1);
    const lingers: number[] = [];
    // One item per kick, a kick every 50 ms: each round carries one item, the linger doubles.
    for (let i = 0; i < 5; i++) {
      pending++;
      loop.kick();
      await advance(50);
      lingers.push(loop.lingerMs);
    }
    expect(lingers).toEqual([10, 20, 40, 40, 40]);
    const start = rounds.length;
    // Forty items in the linger: a full round halves it, down to the shortest.
    for (let i = 0; i < 4; i++) {
      pending += 40;
      loop.kick();
      await advance(50);
      lingers.push(loop.lingerMs);
    }
    expect(lingers.slice(5)).toEqual([20, 10, 5, 5]);
    expect(rounds.length).toBeGreaterThan(start);
    await loop.stop();
  });

  it("keeps a fixed linger when no longest linger is given", async () => {
    vi.useFakeTimers({ now: 0 });
    const { loop } = recorded({ pollMs: 60_000, lingerMs: 5, flushOnStop: false, work: () => 1 });
    loop.start();
    await advance(1);
    for (let i = 0; i < 3; i++) {
      loop.kick();
      await advance(50);
    }
    expect(loop.lingerMs).toBe(5);
    await loop.stop();
  });
});
