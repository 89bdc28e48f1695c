import { Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTransact } from "@gateway/events-runtime";
import { newId } from "@gateway/contract/ids";
import { createLogger } from "@gateway/logger";
import { freshDatabase, type FreshDatabase } from "@gateway/testkit";
import { createPrisma, type Db, type PrismaClient, type Tx } from "../../db.js";
import { KeyExpiryNotices } from "./expiry-notices.js";

const PRISMA_DIR = fileURLToPath(new URL("../../../prisma", import.meta.url));
const DAY = 86_400_000;
const HOUR = 3_600_000;

let fresh: FreshDatabase;
let prisma: PrismaClient;
let db: Db;
const logger = createLogger({ service: "edge", level: "silent", destination: new Writable({ write: (_c, _e, cb) => cb() }) });

beforeAll(async () => {
  fresh = await freshDatabase({ prefix: "gw_test_edge", prismaDir: PRISMA_DIR, poolSize: 4 });
  prisma = createPrisma(fresh.pool);
  db = { prisma, transact: createTransact<Tx>((fn) => prisma.$transaction(fn)) };
});
afterAll(async () => {
  await prisma?.$disconnect();
  await fresh?.drop();
});

/** A clock the test moves by hand. */
const clock = { t: Date.parse("2026-11-01T00:00:00Z"), now: () => clock.t };

async function key(expiresAt: number | null, tenantId = newId("ten")) {
  await prisma.tenant.upsert({ where: { id: tenantId }, create: { id: tenantId, name: "t" }, update: {} });
  const id = newId("key");
  await prisma.apiKey.create({
    data: {
      id,
      tenantId,
      name: "k",
      prefix: `gw_${id.slice(-12)}`,
      hash: id,
      scopes: [],
      serviceAliases: [],
      allowedIps: [],
      expiresAt: expiresAt === null ? null : new Date(expiresAt),
    },
  });
  return id;
}

const notices = async (keyId: string) =>
  (await prisma.outboxEvent.findMany({ where: { type: "key.expiring" }, orderBy: { seq: "asc" } }))
    .map((e) => e.payload as { data?: Record<string, unknown> } & Record<string, unknown>)
    .map((p) => (p.data ?? p) as Record<string, unknown>)
    .filter((d) => d.key_id === keyId)
    .map((d) => d.days_left);

describe("key expiry notices, on an injected clock", () => {
  it("notices 7 days and again 1 day before expires_at, once each, and sleeps until the next one", async () => {
    const expiresAt = clock.t + 10 * DAY;
    const id = await key(expiresAt);
    const revoked = await key(clock.t + 8 * DAY);
    await prisma.apiKey.update({ where: { id: revoked }, data: { revokedAt: new Date(clock.t) } });
    const scan = new KeyExpiryNotices(db, { logger, now: clock.now });

    expect(await scan.scan()).toBe(0);
    expect(await scan.nextDue()).toBe(expiresAt - 7 * DAY); // the revoked key has no notice to come
    clock.t = expiresAt - 7 * DAY - 1;
    expect(await scan.scan()).toBe(0);
    clock.t = expiresAt - 7 * DAY;
    expect(await scan.scan()).toBe(1);
    expect(await scan.scan()).toBe(0);
    expect(await notices(id)).toEqual([7]);
    expect(await scan.nextDue()).toBe(expiresAt - DAY);
    clock.t = expiresAt - 2 * DAY;
    expect(await scan.scan()).toBe(0);
    clock.t = expiresAt - DAY + HOUR;
    expect(await scan.scan()).toBe(1);
    expect(await notices(id)).toEqual([7, 1]);
    expect(await scan.nextDue()).toBeNull();
    clock.t = expiresAt + DAY; // expired: nothing more
    expect(await scan.scan()).toBe(0);
    expect(await notices(revoked)).toEqual([]);
  });

  it("gives a key found within a day of its expiry only the 1-day notice, and no key twice across replicas", async () => {
    clock.t = Date.parse("2026-12-01T00:00:00Z");
    const soon = await key(clock.t + 20 * HOUR);
    const week = await key(clock.t + 5 * DAY);
    await key(null);
    const replicas = [1, 2, 3].map(() => new KeyExpiryNotices(db, { logger, now: clock.now }));
    const sent = await Promise.all(replicas.map((r) => r.scan()));
    expect(sent.reduce((a, b) => a + b, 0)).toBe(2);
    expect(await notices(soon)).toEqual([1]);
    expect(await notices(week)).toEqual([7]);
    const [event] = await prisma.outboxEvent.findMany({ where: { type: "key.expiring" }, orderBy: { seq: "desc" }, take: 1 });
    expect(JSON.stringify(event!.payload)).toMatch(/"prefix":"gw_/);
  });

  it("plans a notice that falls due between a round's scan and its planning at once, not after the longest wait", async () => {
    // The clock moves on while the round runs: after its scan, 10 ms pass before it plans the next wake.
    let t = Date.parse("2030-01-01T00:00:00Z");
    class Slow extends KeyExpiryNotices {
      override async scan(): Promise<number> {
        const sent = await super.scan();
        t += 10;
        return sent;
      }
    }
    const id = await key(t + 7 * DAY + 5); // not due at the scan, due 5 ms later
    const scan = new Slow(db, { logger, now: () => t, maxWaitMs: 60_000 });
    scan.start();
    try {
      const until = Date.now() + 5_000;
      while ((await notices(id)).length === 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
      expect(await notices(id)).toEqual([7]);
    } finally {
      await scan.stop();
    }
  });

  it("wakes itself when a notice falls due, and when a key created here needs one sooner", async () => {
    clock.t = Date.now();
    const scan = new KeyExpiryNotices(db, { logger, now: () => Date.now(), maxWaitMs: 60_000 });
    scan.start();
    try {
      await new Promise((r) => setTimeout(r, 200)); // the first scan (nothing due)
      const expiresAt = Date.now() + 7 * DAY + 300;
      const id = await key(expiresAt);
      scan.keyCreated(new Date(expiresAt));
      const until = Date.now() + 10_000;
      while ((await notices(id)).length === 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
      expect(await notices(id)).toEqual([7]);
    } finally {
      await scan.stop();
    }
  });
});
