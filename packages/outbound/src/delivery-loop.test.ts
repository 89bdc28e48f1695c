import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import pg from "pg";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { connectionConfig, databaseUrl, dropDatabase, ensureDatabase } from "@gateway/db-kit";
import { createLogger } from "@gateway/logger";
import { closeAgents } from "./deliver.js";
import {
  DELIVERY_DUE,
  DeliveryLoop,
  type AttemptRecord,
  type DeliveryClaim,
  type DeliveryLoopOptions,
  type DeliveryStore,
  type Outgoing,
  type Skip,
} from "./delivery-loop.js";
import { egressPolicy } from "./policy.js";
import { verifySignature } from "./signature.js";

const SERVER = process.env.DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
const dbName = `gw_test_outbound_${randomBytes(4).toString("hex")}`;
const SECRET = "loop-secret-0123456789";
const log = createLogger({ service: "delivery-loop-test", level: "silent" });

let pool: pg.Pool;
let server: Server;
let base: string;
type Hit = { at: number; path: string; body: string; headers: IncomingMessage["headers"] };
const hits: Hit[] = [];
/** How the receiver answers a path: a status, after a delay. */
let answer: (path: string, n: number) => { status: number; delayMs?: number } = () => ({ status: 200 });
let inFlight = 0;
let maxInFlight = 0;

beforeAll(async () => {
  await ensureDatabase(SERVER, dbName);
  pool = new pg.Pool(connectionConfig(databaseUrl(SERVER, dbName)));
  await pool.query(`CREATE TABLE deliveries (
    id TEXT PRIMARY KEY, url TEXT NOT NULL, payload TEXT NOT NULL, state TEXT NOT NULL DEFAULT 'pending',
    attempts INT NOT NULL DEFAULT 0, last_status INT, last_error TEXT,
    next_attempt_at TIMESTAMPTZ(3) NOT NULL DEFAULT now())`);
  server = createServer((req, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const path = req.url ?? "/";
      hits.push({ at: Date.now(), path, body: Buffer.concat(chunks).toString(), headers: req.headers });
      const { status, delayMs = 0 } = answer(path, hits.filter((h) => h.path === path).length);
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      setTimeout(() => {
        inFlight--;
        res.writeHead(status).end();
      }, delayMs);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await closeAgents();
  server?.closeAllConnections();
  server?.close();
  await pool?.end();
  await dropDatabase(SERVER, dbName);
});

beforeEach(async () => {
  hits.length = 0;
  inFlight = 0;
  maxInFlight = 0;
  answer = () => ({ status: 200 });
  await pool.query("DELETE FROM deliveries");
});

type Claim = DeliveryClaim & { url: string; payload: string; attempts: number };

/** The store a service writes: claim with SKIP LOCKED and a lease, record only over the claimed attempt count. */
const store: DeliveryStore<Claim> = {
  async claim({ limit, leaseMs }) {
    const { rows } = await pool.query<{ id: string; url: string; payload: string; attempts: number }>(
      `UPDATE deliveries SET next_attempt_at = now() + ($1::int * interval '1 millisecond')
       WHERE id IN (SELECT id FROM deliveries WHERE state = 'pending' AND next_attempt_at <= ${DELIVERY_DUE}
                    ORDER BY next_attempt_at LIMIT $2 FOR UPDATE SKIP LOCKED)
       RETURNING id, url, payload, attempts`,
      [leaseMs, limit],
    );
    return rows.map((r) => ({ ...r, attempt: r.attempts + 1 }));
  },
  async prepare(c): Promise<Outgoing | Skip> {
    if (c.url === "gone") return { skip: "canceled", error: null };
    return { url: c.url, body: JSON.stringify({ event_id: c.id, payload: c.payload }), secret: SECRET, eventId: c.id };
  },
  async record(c, o: AttemptRecord) {
    await pool.query(
      `UPDATE deliveries SET state = $2, attempts = CASE WHEN $2 = 'canceled' THEN attempts ELSE $3 END, last_status = $4, last_error = $5, next_attempt_at = $6
       WHERE id = $1 AND attempts = $7 AND state = 'pending'`,
      [c.id, o.state, o.attempt, o.status, o.error, o.nextAttemptAt, c.attempts],
    );
  },
};

function loop(options: Partial<DeliveryLoopOptions<Claim>> = {}) {
  return new DeliveryLoop<Claim>({
    store,
    policy: egressPolicy({ allowPrivateTargets: true }),
    timeoutMs: 2_000,
    retry: { maxAttempts: 8, baseDelayMs: 100, random: () => 0.5 },
    batchSize: 16,
    pollMs: 60_000,
    log,
    name: "test delivery",
    ...options,
  });
}

async function queue(id: string, path: string): Promise<void> {
  await pool.query("INSERT INTO deliveries (id, url, payload) VALUES ($1, $2, $3)", [id, path === "gone" ? "gone" : `${base}${path}`, `payload of ${id}`]);
}

const row = async (id: string) =>
  (await pool.query<{ state: string; attempts: number; last_status: number | null; last_error: string | null }>("SELECT * FROM deliveries WHERE id = $1", [id]))
    .rows[0]!;

async function until<T>(fn: () => Promise<T | undefined>, timeoutMs = 10_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe("DeliveryLoop", () => {
  it("posts the signed body with its event id and records it delivered", async () => {
    await queue("evt_ok", "/ok");
    const l = loop();
    expect(await l.runOnce()).toBe(1);
    expect(await row("evt_ok")).toMatchObject({ state: "delivered", attempts: 1, last_status: 200, last_error: null });
    const hit = hits[0]!;
    expect(hit.headers["x-service-event-id"]).toBe("evt_ok");
    expect(hit.headers["content-type"]).toBe("application/json");
    expect(verifySignature(SECRET, hit.body, hit.headers["x-service-signature"] as string)).toBe(true);
    expect(JSON.parse(hit.body)).toEqual({ event_id: "evt_ok", payload: "payload of evt_ok" });
    expect(await l.runOnce()).toBe(0);
  });

  it("retries with exponential backoff, woken by the retry's own time, not by the poll", async () => {
    answer = (_path, n) => ({ status: n <= 3 ? 503 : 200 });
    await queue("evt_retry", "/flaky");
    const l = loop({ retry: { maxAttempts: 8, baseDelayMs: 200, random: () => 0.5 } });
    l.start();
    try {
      l.kick();
      await until(async () => ((await row("evt_retry")).state === "delivered" ? true : undefined));
    } finally {
      await l.stop();
    }
    expect(await row("evt_retry")).toMatchObject({ state: "delivered", attempts: 4, last_status: 200 });
    const gaps = hits.slice(1).map((h, i) => h.at - hits[i]!.at);
    // 200 ms × 2^(n-1) with the jitter factor at 1: 200, 400, 800 ms (the poll is a minute away).
    expect(gaps).toHaveLength(3);
    gaps.forEach((gap, i) => {
      expect(gap).toBeGreaterThanOrEqual(200 * 2 ** i - 5);
      expect(gap).toBeLessThan(200 * 2 ** i + 500);
    });
    expect(new Set(hits.map((h) => h.headers["x-service-event-id"]))).toEqual(new Set(["evt_retry"]));
  });

  it("gives up after the attempt limit and sends nothing more", async () => {
    answer = () => ({ status: 500 });
    await queue("evt_down", "/down");
    const l = loop({ retry: { maxAttempts: 3, baseDelayMs: 1, random: () => 0.5 } });
    for (let i = 0; i < 3; i++) {
      await until(async () => ((await l.runOnce()) === 1 ? true : undefined));
    }
    expect(await row("evt_down")).toMatchObject({ state: "exhausted", attempts: 3, last_status: 500, last_error: "http_500" });
    await pool.query("UPDATE deliveries SET next_attempt_at = now() - interval '1 second'");
    expect(await l.runOnce()).toBe(0);
    expect(hits).toHaveLength(3);
  });

  it("keeps at most `concurrency` attempts in flight", async () => {
    answer = () => ({ status: 200, delayMs: 150 });
    for (let i = 0; i < 6; i++) await queue(`evt_c${i}`, `/c${i}`);
    const l = loop({ concurrency: 2 });
    const started = Date.now();
    expect(await l.runOnce()).toBe(6);
    expect(maxInFlight).toBe(2);
    expect(Date.now() - started).toBeGreaterThanOrEqual(3 * 150 - 5);
    expect((await pool.query("SELECT count(*)::int AS n FROM deliveries WHERE state = 'delivered'")).rows[0].n).toBe(6);
  });

  it("stops gracefully: the attempt in flight is recorded, nothing is claimed after", async () => {
    answer = () => ({ status: 200, delayMs: 300 });
    await queue("evt_mid", "/slow");
    const l = loop({ pollMs: 20 });
    l.start();
    l.kick();
    await until(async () => (hits.length === 1 ? true : undefined));
    await l.stop();
    expect(await row("evt_mid")).toMatchObject({ state: "delivered", attempts: 1 });
    await queue("evt_after", "/slow");
    l.kick();
    await new Promise((r) => setTimeout(r, 200));
    expect(hits).toHaveLength(1);
    expect(await row("evt_after")).toMatchObject({ state: "pending", attempts: 0 });
  });

  it("refuses a private target under the default policy, without calling it", async () => {
    await queue("evt_private", "/private");
    const l = loop({ policy: egressPolicy(), retry: { maxAttempts: 2, baseDelayMs: 1, random: () => 0.5 } });
    expect(await l.runOnce()).toBe(1);
    expect(await row("evt_private")).toMatchObject({ state: "pending", attempts: 1, last_status: null, last_error: "private_address" });
    await until(async () => ((await l.runOnce()) === 1 ? true : undefined));
    expect(await row("evt_private")).toMatchObject({ state: "exhausted", attempts: 2, last_error: "private_address" });
    expect(hits).toHaveLength(0);
  });

  it("records a delivery that no longer applies as canceled, its attempts untouched", async () => {
    await queue("evt_gone", "gone");
    expect(await loop().runOnce()).toBe(1);
    expect(await row("evt_gone")).toMatchObject({ state: "canceled", attempts: 0 });
    expect(hits).toHaveLength(0);
  });

  it("leaves a claim it could not record to be claimed again once its lease has passed", async () => {
    await queue("evt_lost", "/ok");
    const failing = { ...store, record: async () => Promise.reject(new Error("database went away")) };
    const l = loop({ store: failing, timeoutMs: 200, leaseMarginMs: 0 });
    expect(await l.runOnce()).toBe(1);
    expect(await l.runOnce()).toBe(0); // leased
    await new Promise((r) => setTimeout(r, 250));
    expect(await loop().runOnce()).toBe(1);
    expect(await row("evt_lost")).toMatchObject({ state: "delivered", attempts: 1 });
  });
});
