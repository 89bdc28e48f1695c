import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { KeyLimits, type LimitedKey } from "./limits.js";

const url = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const redisA = new Redis(url, { maxRetriesPerRequest: 1, enableAutoPipelining: true });
const redisB = new Redis(url, { maxRetriesPerRequest: 1, enableAutoPipelining: true });
afterAll(async () => {
  await redisA.quit();
  await redisB.quit();
});
const prefix = `gwtest${randomBytes(4).toString("hex")}`;
// Two replicas of the edge: two clients, one Redis.
const a = new KeyLimits(redisA, prefix, 30_000);
const b = new KeyLimits(redisB, prefix, 30_000);
let n = 0;
async function newKey(concurrencyLimit: number): Promise<LimitedKey> {
  const key = { id: `key_${++n}`, version: 1, dailyQuota: null, rateLimitPerMinute: null, concurrencyLimit };
  await a.publishVersion(key.id, 1);
  return key;
}
const held = (keyId: string) => redisA.zcard(`${prefix}:{${keyId}}:c`);

beforeAll(() => redisA.ping());

describe("concurrency slots", () => {
  it("a release carried by the next admission of the same key in the same turn costs no command of its own", async () => {
    const key = await newKey(1);
    expect(await a.admit(key, "l1")).toEqual({ kind: "ok" });
    expect(await a.admit(key, "l2")).toMatchObject({ kind: "denied", reason: "concurrency" });
    const zrem = vi.spyOn(redisA, "zrem");
    const released = a.release(key.id, "l1");
    expect(await a.admit(key, "l3")).toEqual({ kind: "ok" });
    await released;
    await new Promise((r) => setImmediate(r));
    expect(zrem).not.toHaveBeenCalled();
    expect(await held(key.id)).toBe(1);
    zrem.mockRestore();
  });

  it("releases with no admission to carry them go at the end of the turn, one ZREM per key", async () => {
    const key = await newKey(3);
    for (const lease of ["m1", "m2", "m3"]) expect(await a.admit(key, lease)).toEqual({ kind: "ok" });
    const zrem = vi.spyOn(redisA, "zrem");
    await Promise.all([a.release(key.id, "m1"), a.release(key.id, "m2")]);
    expect(zrem).toHaveBeenCalledTimes(1);
    expect(zrem.mock.calls[0]!.slice(1)).toEqual(["m1", "m2"]);
    expect(await held(key.id)).toBe(1);
    zrem.mockRestore();
    // A slot freed on one replica is free on the other at once.
    expect(await b.admit(key, "m4")).toEqual({ kind: "ok" });
    expect(await b.admit(key, "m5")).toEqual({ kind: "ok" });
    expect(await b.admit(key, "m6")).toMatchObject({ kind: "denied", reason: "concurrency" });
  });

  it("with a linger, the next admission carries a release even a turn later, and one that none carries goes alone after it", async () => {
    const lingering = new KeyLimits(redisA, prefix, 30_000, 80);
    const key = await newKey(1);
    expect(await lingering.admit(key, "g1")).toEqual({ kind: "ok" });
    const zrem = vi.spyOn(redisA, "zrem");
    const released = lingering.release(key.id, "g1");
    // The client's next request arrives after the answer's turn has ended.
    await new Promise((r) => setTimeout(r, 10));
    expect(await lingering.admit(key, "g2")).toEqual({ kind: "ok" });
    await released;
    await new Promise((r) => setTimeout(r, 120));
    expect(zrem).not.toHaveBeenCalled();
    expect(await held(key.id)).toBe(1);
    // No admission follows: the slot is given back once the linger is over, and not before.
    const started = Date.now();
    await lingering.release(key.id, "g2");
    expect(Date.now() - started).toBeGreaterThanOrEqual(70);
    expect(zrem).toHaveBeenCalledTimes(1);
    expect(await held(key.id)).toBe(0);
    // Another replica may take it at once.
    expect(await b.admit(key, "g3")).toEqual({ kind: "ok" });
    zrem.mockRestore();
  });

  it("a stale admission still applies the releases it carries", async () => {
    const key = await newKey(1);
    expect(await a.admit(key, "s1")).toEqual({ kind: "ok" });
    await a.publishVersion(key.id, 2);
    const released = a.release(key.id, "s1");
    expect(await a.admit(key, "s2")).toEqual({ kind: "stale" });
    await released;
    expect(await held(key.id)).toBe(0);
  });

  it("never holds more slots than the limit across two replicas, admissions and releases interleaved", async () => {
    const limit = 3;
    const key = await newKey(limit);
    const inFlight = new Set<string>();
    let peak = 0;
    let admitted = 0;
    const worker = async (replica: KeyLimits, name: string) => {
      for (let i = 0; i < 40; i++) {
        const lease = `${name}-${i}`;
        const admission = await replica.admit(key, lease);
        if (admission.kind !== "ok") continue;
        admitted++;
        inFlight.add(lease);
        peak = Math.max(peak, inFlight.size);
        await new Promise((r) => setTimeout(r, Math.random() * 3));
        inFlight.delete(lease);
        void replica.release(key.id, lease);
      }
    };
    await Promise.all([0, 1, 2, 3, 4, 5].map((w) => worker(w % 2 ? b : a, `w${w}`)));
    await new Promise((r) => setTimeout(r, 50));
    expect(peak).toBeLessThanOrEqual(limit);
    expect(admitted).toBeGreaterThan(limit);
    expect(await held(key.id)).toBe(0);
  });
});
