import { describe, expect, it } from "vitest";
import { GroupCommit } from "./group-commit.js";

const tick = () => new Promise((r) => setTimeout(r, 5));

describe("GroupCommit", () => {
  it("sends one item at once when a slot is free, and what waited as one batch", async () => {
    const batches: number[][] = [];
    const sizes: number[] = [];
    const gc = new GroupCommit<number, number>({
      concurrency: 1,
      onBatch: (size) => sizes.push(size),
      run: async (items) => {
        batches.push(items);
        await tick();
        return items.map((i) => i * 10);
      },
    });
    const results = await Promise.all([1, 2, 3, 4, 5].map((i) => gc.submit(i)));
    expect(results).toEqual([10, 20, 30, 40, 50]);
    expect(batches).toEqual([[1], [2, 3, 4, 5]]);
    expect(await gc.submit(6)).toBe(60); // idle again: alone, at once
    expect(batches.at(-1)).toEqual([6]);
    expect(sizes).toEqual([1, 4, 1]);
  });

  it("keeps at most `concurrency` batches in flight and at most `maxBatch` items per batch", async () => {
    let inFlight = 0;
    let most = 0;
    const sizes: number[] = [];
    const gc = new GroupCommit<number, number>({
      concurrency: 2,
      maxBatch: 3,
      run: async (items) => {
        most = Math.max(most, ++inFlight);
        sizes.push(items.length);
        await tick();
        inFlight--;
        return items;
      },
    });
    await Promise.all(Array.from({ length: 20 }, (_, i) => gc.submit(i)));
    expect(most).toBe(2);
    expect(Math.max(...sizes)).toBe(3);
    expect(sizes.reduce((a, b) => a + b, 0)).toBe(20);
  });

  it("retries a failed batch item by item: the failure rejects its own item only", async () => {
    const calls: number[][] = [];
    const failures: number[] = [];
    const gc = new GroupCommit<number, string>({
      concurrency: 1,
      onBatchFailure: (_err, size) => failures.push(size),
      run: async (items) => {
        calls.push(items);
        await tick();
        if (items.includes(13)) throw new Error("13 is unlucky");
        return items.map(String);
      },
    });
    const first = gc.submit(1);
    const rest = [12, 13, 14].map((i) => gc.submit(i));
    const settled = await Promise.allSettled([first, ...rest]);
    expect(settled.map((s) => (s.status === "fulfilled" ? s.value : (s.reason as Error).message))).toEqual(["1", "12", "13 is unlucky", "14"]);
    expect(failures).toEqual([3]);
    expect(calls).toEqual([[1], [12, 13, 14], [12], [13], [14]]);
  });

  it("treats a wrong number of results as a failed batch", async () => {
    const gc = new GroupCommit<number, number>({ concurrency: 1, run: async (items) => (items.length > 1 ? [1] : items) });
    const blocker = gc.submit(0);
    expect(await Promise.all([blocker, gc.submit(1), gc.submit(2)])).toEqual([0, 1, 2]);
  });

  it("without failure isolation, fails every item of a failed batch with its error, at once", async () => {
    const calls: number[][] = [];
    const gc = new GroupCommit<number, number>({
      concurrency: 1,
      isolateFailures: false,
      run: async (items) => {
        calls.push(items);
        await tick();
        if (items.length > 1) throw new Error("the peer is down");
        return items;
      },
    });
    const settled = await Promise.allSettled([0, 1, 2].map((i) => gc.submit(i)));
    expect(settled.map((s) => s.status)).toEqual(["fulfilled", "rejected", "rejected"]);
    expect(calls).toEqual([[0], [1, 2]]);
  });
});
