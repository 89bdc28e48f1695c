import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { addressBucket, AuthAttempts, type AuthAttemptSettings } from "./attempt-limits.js";
import type { IdentityContext } from "./context.js";
import { login } from "./sessions.js";

const redis = new Redis(process.env.REDIS_URL ?? "redis://127.0.0.1:6379", { maxRetriesPerRequest: 1 });
const run = randomBytes(4).toString("hex");
const prefix = `gwtest${run}`;
afterAll(async () => {
  const keys = await redis.keys(`${prefix}:*`);
  if (keys.length > 0) await redis.del(...keys);
  await redis.quit();
});

const defaults: AuthAttemptSettings = { perAddressPerMinute: 0, perEmailPerMinute: 0, backoffAfterFailures: 0, backoffBaseMs: 1000, backoffMaxMs: 60_000 };
const limiter = (settings: Partial<AuthAttemptSettings>) => new AuthAttempts(redis, prefix, { ...defaults, ...settings });
const outcome = (p: Promise<unknown>) =>
  p.then(
    () => "ok",
    (err: { code: string; retryAfter?: number }) => err,
  );
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("attempts per client address", () => {
  it("admit up to the limit per minute and route, then rate_limited with a Retry-After; other addresses and routes are not affected", async () => {
    const a = limiter({ perAddressPerMinute: 3 });
    const ip = `198.51.100.${Math.floor(Math.random() * 200)}-${run}`;
    for (let i = 0; i < 3; i++) await a.admitAddress("login", ip);
    const refused = await outcome(a.admitAddress("login", ip));
    expect(refused).toMatchObject({ code: "rate_limited", httpStatus: 429 });
    expect((refused as { retryAfter: number }).retryAfter).toBeGreaterThanOrEqual(1);
    expect((refused as { retryAfter: number }).retryAfter).toBeLessThanOrEqual(60);
    await a.admitAddress("register", ip);
    await a.admitAddress("login", `${ip}-other`);
  });

  it("count across replicas (one Redis), and only admitted attempts", async () => {
    const [a, b] = [limiter({ perAddressPerMinute: 4 }), limiter({ perAddressPerMinute: 4 })];
    const ip = `203.0.113.9-${run}`;
    const results = await Promise.all(Array.from({ length: 12 }, (_, i) => outcome((i % 2 ? a : b).admitAddress("refresh", ip))));
    expect(results.filter((r) => r === "ok")).toHaveLength(4);
    expect(results.filter((r) => r !== "ok").every((r) => (r as { code: string }).code === "rate_limited")).toBe(true);
  });

  it("count an IPv6 client by its /64", async () => {
    expect(addressBucket("2001:db8:1:2:aaaa::1")).toBe("2001:db8:1:2::/64");
    expect(addressBucket("2001:0db8:0001:0002:ffff:ffff:ffff:ffff")).toBe("2001:db8:1:2::/64");
    expect(addressBucket("2001:db8::1")).toBe("2001:db8:0:0::/64");
    expect(addressBucket("::1")).toBe("0:0:0:0::/64");
    expect(addressBucket("192.0.2.1")).toBe("192.0.2.1");
    const a = limiter({ perAddressPerMinute: 2 });
    const net = `2001:db8:${Number.parseInt(run.slice(0, 4), 16).toString(16)}:7`;
    await a.admitAddress("login", `${net}::1`);
    await a.admitAddress("login", `${net}:1:2:3:4`);
    expect(await outcome(a.admitAddress("login", `${net}::ffff`))).toMatchObject({ code: "rate_limited" });
  });

  it("are not limited at 0", async () => {
    const a = limiter({ perAddressPerMinute: 0 });
    for (let i = 0; i < 50; i++) await a.admitAddress("login", `192.0.2.1-${run}`);
  });
});

describe("sign-in attempts per email", () => {
  it("are limited per minute for any email, known or not, whatever the address", async () => {
    const a = limiter({ perEmailPerMinute: 2 });
    const email = `nobody-${run}@example.com`;
    await a.admitSignIn("192.0.2.10", email);
    await a.admitSignIn("192.0.2.11", email.toUpperCase());
    expect(await outcome(a.admitSignIn("192.0.2.12", email))).toMatchObject({ code: "rate_limited", message: expect.stringContaining("email") });
    await a.admitSignIn("192.0.2.12", `other-${email}`);
  });

  it("back off exponentially after consecutive failures, up to the maximum; a success resets the run", async () => {
    const a = limiter({ backoffAfterFailures: 2, backoffBaseMs: 300, backoffMaxMs: 1_000 });
    const email = `victim-${run}@example.com`;
    await a.failed(email);
    await a.admitSignIn("192.0.2.20", email); // one failure: no wait yet
    await a.failed(email); // second: 300 ms
    expect(await outcome(a.admitSignIn("192.0.2.20", email))).toMatchObject({ code: "rate_limited", retryAfter: 1 });
    await sleep(350);
    await a.admitSignIn("192.0.2.20", email);
    await a.failed(email); // third: 600 ms
    await sleep(350);
    expect(await outcome(a.admitSignIn("192.0.2.21", email))).toMatchObject({ code: "rate_limited" });
    await sleep(300);
    await a.admitSignIn("192.0.2.21", email);
    for (let i = 0; i < 10; i++) await a.failed(email); // capped at 1 s, never 2^12 * 300 ms
    const blocked = await outcome(a.admitSignIn("192.0.2.21", email));
    expect(blocked).toMatchObject({ code: "rate_limited", retryAfter: 1 });
    await sleep(1_050);
    await a.admitSignIn("192.0.2.21", email);
    await a.succeeded(email);
    await a.failed(email); // a fresh run: one failure, no wait
    await a.admitSignIn("192.0.2.21", email);
  });

  it("store no email in Redis", async () => {
    const a = limiter({ perEmailPerMinute: 5, backoffAfterFailures: 3 });
    const email = `private-${run}@example.com`;
    await a.admitSignIn("192.0.2.30", email);
    await a.failed(email);
    const keys = await redis.keys(`${prefix}:*`);
    expect(keys.some((k) => k.includes("private-"))).toBe(false);
  });
});

describe("without a store", () => {
  it("admit nothing: 503 unavailable, not an unhandled error", async () => {
    const down = new Redis("redis://127.0.0.1:1", { maxRetriesPerRequest: 0, enableOfflineQueue: false, lazyConnect: true, retryStrategy: () => null });
    const a = new AuthAttempts(down, prefix, { ...defaults, perAddressPerMinute: 5, perEmailPerMinute: 5, backoffAfterFailures: 5 });
    expect(await outcome(a.admitAddress("register", "192.0.2.40"))).toMatchObject({ code: "unavailable" });
    expect(await outcome(a.admitSignIn("192.0.2.40", "a@example.com"))).toMatchObject({ code: "unavailable" });
    down.disconnect();
  });
});

describe("a refused sign-in", () => {
  // The password is hashed only after the user is read: a database that cannot be read proves neither happened.
  it("is refused before the database is read or a password is hashed", async () => {
    const attempts = limiter({ perAddressPerMinute: 1 });
    const untouchable = new Proxy(
      {},
      {
        get: () => {
          throw new Error("the database was read");
        },
      },
    );
    const ctx = { prisma: untouchable, transact: untouchable, sessions: untouchable, tokens: untouchable, attempts } as unknown as IdentityContext;
    const address = `192.0.2.50-${run}`;
    await attempts.admitAddress("login", address);
    const refused = await outcome(login({ ctx, input: { email: "a@example.com", password: "whatever-password", address } }));
    expect(refused).toMatchObject({ code: "rate_limited" });
  });
});
