import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { createClient } from "@gateway/grpc-kit";
import type { MockProvider } from "@gateway/mock-provider";
import { ledgerV1 } from "@gateway/protos";
import { call, startStack, type ServiceName, type Stack } from "@gateway/testkit";
import { customer, managedModel, mockProvider, operator, PROVIDER_KEY, upstream, type Customer, type Operator } from "../src/support/managed-ai.js";
import { settledBooks } from "../src/support/money-audit.js";
import { eventsCheck } from "./support/events-check.js";
import {
  startPrivateNats,
  startPrivatePostgres,
  startPrivateRedis,
  type PrivateNats,
  type PrivatePostgres,
  type PrivateRedis,
} from "./support/private-infra.js";

/*
 * Issue 37: dependencies that go away under load, each for OUTAGE_SECONDS (30 by
 * default, as the issue says), with servers of the test's own (never the machine's
 * shared ones): Redis, NATS, managed-ai's own PostgreSQL, and the ledger. What fails
 * closed and why: docs/decisions/0235.
 */

const OUTAGE_MS = Number(process.env.OUTAGE_SECONDS ?? 30) * 1000;
const QUOTA = 12;
const CONCURRENCY = 2;
const CREDIT = 50_000_000;

let pgMain: PrivatePostgres;
let pgAi: PrivatePostgres;
let nats: PrivateNats;
let redis: PrivateRedis;
let stack: Stack;
let provider: MockProvider;
let slow: { url: string; max: number; inFlight: number; server: Server };
let op: Operator;
let steady: Customer;
let quota: Customer;
let limited: Customer;
const planned: Partial<Record<ServiceName, number>> = {};

/** In front of the mock provider, answering 300 ms late and counting the calls it holds at once. */
async function slowProvider(target: string): Promise<typeof slow> {
  const state = { url: "", max: 0, inFlight: 0, server: undefined as unknown as Server };
  state.server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", async () => {
      state.inFlight++;
      state.max = Math.max(state.max, state.inFlight);
      try {
        await new Promise((r) => setTimeout(r, 300));
        const answer = await fetch(`${target}${req.url!.replace(/^\/v1/, "")}`, {
          method: req.method!,
          headers: { authorization: String(req.headers.authorization ?? ""), "content-type": "application/json" },
          ...(req.method === "POST" ? { body: Buffer.concat(chunks) } : {}),
        });
        const body = Buffer.from(await answer.arrayBuffer());
        res.writeHead(answer.status, { "content-type": answer.headers.get("content-type") ?? "application/json" }).end(body);
      } catch {
        res.writeHead(502).end();
      } finally {
        state.inFlight--;
      }
    });
  });
  await new Promise<void>((r) => state.server.listen(0, "127.0.0.1", r));
  state.url = `http://127.0.0.1:${(state.server.address() as AddressInfo).port}/v1`;
  return state;
}

beforeAll(async () => {
  [pgMain, pgAi, nats, redis] = await Promise.all([startPrivatePostgres(), startPrivatePostgres(), startPrivateNats(), startPrivateRedis()]);
  provider = await mockProvider();
  slow = await slowProvider(provider.url);
  stack = await startStack({
    databaseUrl: pgMain.url,
    databaseUrls: { "managed-ai": pgAi.url },
    natsUrl: nats.url,
    redisUrl: redis.url,
    readyTimeoutMs: 120_000,
    env: {
      "managed-ai": {
        RECONCILE_INTERVAL_MS: "1000",
        RECONCILE_RESERVED_AFTER_SECONDS: "20",
        RECONCILE_SETTLED_AFTER_SECONDS: "5",
        LEDGER_DEADLINE_MS: "1500",
        ALLOTMENT_IDLE_SECONDS: "5",
        ALLOTMENT_MAX_AGE_SECONDS: "3600",
        DATABASE_POOL_SIZE: "6",
      },
      edge: { DATABASE_POOL_SIZE: "6" },
      ledger: { DATABASE_POOL_SIZE: "6" },
      jobs: { DATABASE_POOL_SIZE: "4" },
      messaging: { DATABASE_POOL_SIZE: "2" },
      files: { DATABASE_POOL_SIZE: "2" },
    },
  });
  op = await operator(stack);
  await upstream(stack, op, provider, "mock");
  const slowUpstream = await call(stack.edgeUrl, "PUT", "/ops/ai/upstreams/slow", {
    token: op.token,
    body: { provider: "openai", base_url: slow.url, api_key: PROVIDER_KEY },
  });
  expect(slowUpstream.status).toBe(200);
  await managedModel(stack, op, { alias: "small", upstreamId: "mock", inputPerMtok: 1_000_000, outputPerMtok: 2_000_000 });
  await managedModel(stack, op, { alias: "slow", upstreamId: "slow", inputPerMtok: 1_000_000, outputPerMtok: 2_000_000 });
  steady = await customer(stack, op, { units: CREDIT, alias: "ai", defaultModel: "small" });
  quota = await customer(stack, op, { units: CREDIT, alias: "ai", defaultModel: "small", keyPolicy: { daily_quota: QUOTA } });
  limited = await customer(stack, op, {
    units: CREDIT,
    alias: "ai",
    defaultModel: "slow",
    config: { models: ["slow"] },
    keyPolicy: { concurrency_limit: CONCURRENCY },
  });
}, 300_000);

afterAll(async () => {
  await stack?.shutdown().catch(() => undefined);
  await provider?.close();
  slow?.server.closeAllConnections();
  slow?.server.close();
  await Promise.all([nats?.close(), redis?.close(), pgMain?.close(), pgAi?.close()]);
});

type Outcome = { who: string; start: number; end: number; status: number };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function chat(c: Customer, who: string, model?: string): Promise<Outcome> {
  const start = performance.now();
  try {
    const res = await fetch(`${stack.edgeUrl}/v1/apps/ai/ai/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": c.key },
      body: JSON.stringify({ ...(model ? { model } : {}), messages: [{ role: "user", content: "Hello there, how are holds kept?" }], max_tokens: 20 }),
      signal: AbortSignal.timeout(20_000),
    });
    await res.arrayBuffer();
    return { who, start, end: performance.now(), status: res.status };
  } catch {
    return { who, start, end: performance.now(), status: 0 };
  }
}

/** Workers sending calls (20 ms apart each) until `stop()`; every outcome kept. */
function load(workers: { c: Customer; who: string; n: number }[]) {
  const outcomes: Outcome[] = [];
  let stopped = false;
  const running = workers.flatMap(({ c, who, n }) =>
    Array.from({ length: n }, async () => {
      while (!stopped) {
        outcomes.push(await chat(c, who));
        await sleep(20);
      }
    }),
  );
  return {
    outcomes,
    async stop() {
      stopped = true;
      await Promise.all(running);
      return outcomes;
    },
  };
}

const between = (list: Outcome[], from: number, to: number, who?: string) => list.filter((o) => o.start >= from && o.end <= to && (!who || o.who === who));
const pct = (values: number[], p: number) => {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? 0;
};
const statuses = (list: Outcome[]) => {
  const by: Record<number, number> = {};
  for (const o of list) by[o.status] = (by[o.status] ?? 0) + 1;
  return by;
};

describe(`dependencies that go away under load (${OUTAGE_MS / 1000} s each)`, () => {
  it("Redis stopped: metered calls fail closed with a fast 503, come back within 1 s of Redis, and no key passes its quota or concurrency", async () => {
    // The quota key spends its day before the outage: a restart must not hand out a fresh one.
    const before: Outcome[] = [];
    for (let i = 0; i < QUOTA + 3; i++) before.push(await chat(quota, "quota"));
    expect(before.filter((o) => o.status === 200)).toHaveLength(QUOTA);
    expect(before.filter((o) => o.status === 429)).toHaveLength(3);
    // What a refusal by the limits costs on this machine right now (Redis answering): the
    // bound for a 503 is 100 ms, or twice that where the shared machine is slower than that.
    const refusals: number[] = [];
    for (let i = 0; i < 20; i++) {
      const o = await chat(quota, "baseline");
      refusals.push(o.end - o.start);
    }

    const run = load([
      { c: steady, who: "steady", n: 3 },
      { c: limited, who: "limited", n: 5 },
      { c: quota, who: "quota", n: 1 },
    ]);
    await sleep(5_000);
    const downAt = performance.now();
    const startedAt = await redis.restart(OUTAGE_MS);
    const upAt = performance.now();
    await sleep(5_000);
    const all = await run.stop();

    // During the outage (from 250 ms after the kill until Redis is started again; the edge may
    // be back on it before this test's PING is answered): every call answered 503, never
    // unchecked, and fast.
    const during = between(all, downAt + 250, startedAt);
    expect(during.length).toBeGreaterThan(20);
    expect(statuses(during), "only 503 while Redis is down").toEqual({ 503: during.length });
    const ms = during.map((o) => o.end - o.start);
    const p99 = pct(ms, 99);
    // Under the same load just before the outage, the quota key's 429s (Redis answering).
    const loaded = between(all, 0, downAt, "quota").map((o) => o.end - o.start);
    const bound = Math.max(100, 2 * pct([...refusals, ...loaded], 99));
    console.log(
      `Redis down: ${during.length} calls, 503 in p50 ${pct(ms, 50).toFixed(1)} ms, p99 ${p99.toFixed(1)} ms, max ${Math.max(...ms).toFixed(1)} ms; ` +
        `a 429 with Redis up: p99 ${pct(refusals, 99).toFixed(1)} ms alone, ${pct(loaded, 99).toFixed(1)} ms under the same load`,
    );
    expect(p99).toBeLessThan(bound);
    // None waits for Redis (a hung call would take the client's timeout).
    expect(Math.max(...ms)).toBeLessThan(3_000);

    // Back within 1 s of Redis answering again (upAt is when it answered PING): the last 503
    // is answered by then, and every call started after it passes its checks.
    const refusedAfter = all.filter((o) => o.status === 503 && o.end >= upAt).map((o) => o.end - upAt);
    const lastRefusal = refusedAfter.length > 0 ? Math.max(...refusedAfter) : 0;
    const firstOk = all.filter((o) => o.who === "steady" && o.start >= upAt - 250 && o.status === 200).sort((a, b) => a.end - b.end)[0];
    expect(firstOk, "a call passed after Redis returned").toBeDefined();
    console.log(
      `Redis back: the last 503 ${lastRefusal.toFixed(0)} ms after Redis answered; the first metered 200 done ${(firstOk!.end - upAt).toFixed(0)} ms after (a whole call)`,
    );
    expect(lastRefusal).toBeLessThan(1_000);
    expect(between(all, upAt + 1_000, Infinity, "steady").filter((o) => o.status !== 200)).toEqual([]);

    // The spent quota stayed spent across the restart; the concurrency limit held throughout.
    const quotaAfter = all.filter((o) => o.who === "quota");
    expect(quotaAfter.filter((o) => o.status === 200)).toEqual([]);
    expect(between(all, upAt + 1_000, Infinity, "quota").every((o) => o.status === 429)).toBe(true);
    expect(all.filter((o) => o.who === "limited" && o.status === 200).length).toBeGreaterThan(10);
    expect(slow.max, "calls of the concurrency-limited key the provider held at once").toBeLessThanOrEqual(CONCURRENCY);
    expect(all.filter((o) => o.status >= 500 && o.status !== 503)).toEqual([]);
  }, 180_000);

  it("Redis hung (SIGSTOP): calls fail after the command timeout, the ones after at once, and come back when it answers", async () => {
    const refusals: number[] = [];
    for (let i = 0; i < 20; i++) {
      const o = await chat(quota, "baseline");
      refusals.push(o.end - o.start);
    }
    const bound = Math.max(100, 2 * pct(refusals, 99));
    const run = load([{ c: steady, who: "steady", n: 3 }]);
    await sleep(1_000);
    redis.freeze();
    const frozenAt = performance.now();
    await sleep(5_000);
    redis.thaw();
    const thawedAt = performance.now();
    await sleep(3_000);
    const all = await run.stop();
    const during = between(all, frozenAt + 1_000, thawedAt);
    expect(statuses(during)).toEqual({ 503: during.length });
    const ms = during.map((o) => o.end - o.start);
    console.log(
      `Redis hung: ${during.length} calls, 503 in p50 ${pct(ms, 50).toFixed(1)} ms, p99 ${pct(ms, 99).toFixed(1)} ms; a 429 with Redis up: p99 ${pct(refusals, 99).toFixed(1)} ms`,
    );
    expect(pct(ms, 99)).toBeLessThan(bound);
    expect(between(all, thawedAt + 1_000, Infinity).filter((o) => o.status !== 200)).toEqual([]);
  }, 60_000);

  it("NATS stopped: requests go on, and every event arrives afterwards, exactly once", async () => {
    const run = load([{ c: steady, who: "steady", n: 3 }]);
    await sleep(2_000);
    const downAt = performance.now();
    await nats.restart(OUTAGE_MS);
    const upAt = performance.now();
    await sleep(3_000);
    const all = await run.stop();
    const during = between(all, downAt, upAt);
    console.log(`NATS down: ${JSON.stringify(statuses(during))}`);
    expect(during.length).toBeGreaterThan(10);
    expect(statuses(during)).toEqual({ 200: during.length });
    const events = await eventsCheck(stack, 120_000);
    expect(events.problems).toEqual([]);
  }, 300_000);

  it("managed-ai's PostgreSQL restarted: fast 503s while it is down, then recovery, nothing lost", async () => {
    const run = load([{ c: steady, who: "steady", n: 3 }]);
    await sleep(2_000);
    const downAt = performance.now();
    await pgAi.restart(OUTAGE_MS);
    const upAt = performance.now();
    await sleep(5_000);
    const all = await run.stop();
    const during = between(all, downAt + 1_000, upAt);
    const ms = during.map((o) => o.end - o.start);
    const usual = between(all, 0, downAt).map((o) => o.end - o.start);
    console.log(
      `managed-ai's PostgreSQL down: ${JSON.stringify(statuses(during))}, p50 ${pct(ms, 50).toFixed(1)} ms, p99 ${pct(ms, 99).toFixed(1)} ms; ` +
        `the same calls before: p99 ${pct(usual, 99).toFixed(1)} ms`,
    );
    expect(during.length).toBeGreaterThan(10);
    expect(statuses(during)).toEqual({ 503: during.length });
    // Fast: no slower than a served call (no waiting on a connection that will not come).
    expect(pct(ms, 99)).toBeLessThan(Math.max(500, 2 * pct(usual, 99)));
    const firstOk = all.filter((o) => o.start >= upAt && o.status === 200).sort((a, b) => a.end - b.end)[0];
    expect(firstOk).toBeDefined();
    console.log(`managed-ai's PostgreSQL back: first 200 ${(firstOk!.end - upAt).toFixed(0)} ms after it answered`);
    expect(between(all, upAt + 3_000, Infinity).filter((o) => o.status !== 200)).toEqual([]);
    const audit = await settledBooks(stack, [steady.tenantId], 120_000);
    expect(audit.problems).toEqual([]);
  }, 300_000);

  it("the ledger stopped: calls that fit the open allotment go on, and every charge is posted after it returns", async () => {
    const run = load([{ c: steady, who: "steady", n: 3 }]);
    await sleep(3_000);
    const downAt = performance.now();
    planned.ledger = (planned.ledger ?? 0) + 1;
    await stack.stop("ledger", "SIGKILL");
    await sleep(OUTAGE_MS);
    await stack.start("ledger");
    const upAt = performance.now();
    await sleep(3_000);
    const all = await run.stop();
    const during = between(all, downAt, upAt);
    console.log(`ledger down: ${JSON.stringify(statuses(during))}`);
    expect(during.length).toBeGreaterThan(10);
    expect(statuses(during)).toEqual({ 200: during.length });

    // Every allotment closes (idle), and then the ledger's journal holds every charge.
    const tenants = [steady.tenantId, quota.tenantId, limited.tenantId];
    const closed = async () =>
      (await stack.sql<{ n: number }>("managed-ai", "SELECT count(*)::int AS n FROM allotments WHERE state <> 'closed' AND tenant_id = ANY($1)", [tenants]))[0]!
        .n;
    const until = Date.now() + 120_000;
    while ((await closed()) > 0 && Date.now() < until) await sleep(1_000);
    expect(await closed()).toBe(0);
    const audit = await settledBooks(stack, tenants, 120_000);
    expect(audit.problems).toEqual([]);
    const ledger = createClient(ledgerV1, stack.address("ledger"), { deadlineMs: 10_000, serviceToken: stack.serviceToken, tls: stack.tls });
    onTestFinished(() => ledger.close());
    expect((await ledger.CheckInvariant({ all_tenants: true })).ok).toBe(true);
    for (const c of [steady, quota, limited]) {
      const b = await ledger.GetBalance({ tenant_id: c.tenantId });
      const [charged] = await stack.sql<{ units: string | null; records: number; from_allotments: number }>(
        "managed-ai",
        "SELECT sum(final_units)::text AS units, count(*)::int AS records, count(allotment_id)::int AS from_allotments FROM usage_records WHERE tenant_id = $1 AND status = 'completed'",
        [c.tenantId],
      );
      const [posts] = await stack.sql<{ n: number }>("ledger", "SELECT count(*)::int AS n FROM transfers WHERE tenant_id = $1 AND kind = 'post'", [c.tenantId]);
      expect(BigInt(CREDIT) - BigInt(b.available_units) - BigInt(b.reserved_units)).toBe(BigInt(charged!.units ?? "0"));
      expect(BigInt(b.reserved_units)).toBe(0n);
      expect(posts!.n).toBe(charged!.from_allotments);
    }
    const events = await eventsCheck(stack, 120_000);
    expect(events.problems).toEqual([]);

    // No process died that the tests did not stop.
    for (const name of ["edge", "ledger", "managed-ai", "jobs", "messaging", "files"] as ServiceName[]) {
      const proc = stack.process(name);
      expect(proc.running, `${name}\n${proc.tail()}`).toBe(true);
      expect(proc.exits.length, `${name}\n${proc.tail()}`).toBe(planned[name] ?? 0);
    }
  }, 300_000);
});
