import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, type Stack } from "@gateway/testkit";
import { AccountHooks, type Hook } from "./support/account-hooks.js";
import { balanceWithin1s, customer, managedModel, meteredStack, type Customer, type Operator } from "./support/managed-ai.js";
import { eventually } from "./support/tron.js";

// Account webhooks and alerts (CONTRACT.md section 13, docs/decisions/0210): every event
// delivered signed, retried and exhausted; balance.low once per crossing under concurrent
// spending across replicas; key.expiring driven by an injected clock; private targets refused.
const DAY = 86_400_000;
const EVENTS = ["budget.threshold", "budget.reached", "balance.low", "key.expiring", "ping"];
const UNITS_PER_CALL = 300; // output 3 tokens at 100 units each, input free: reservation == charge

let stack: Stack;
let op: Operator;
let hooks: AccountHooks;
let edge2: string;
// Nine processes (three edges, two of managed-ai and of jobs): small pools, so that the stack fits in
// the shared PostgreSQL's connections beside other stacks.
const POOL = { DATABASE_POOL_SIZE: "4" };
const metered = meteredStack({
  env: {
    edge: POOL,
    ledger: POOL,
    "managed-ai": POOL,
    messaging: POOL,
    files: POOL,
    jobs: { ...POOL, CALLBACK_ALLOW_HTTP_LOOPBACK: "true", CALLBACK_BASE_DELAY_MS: "20", CALLBACK_POLL_MS: "100", CALLBACK_TIMEOUT_MS: "3000" },
  },
});

beforeAll(async () => {
  ({ stack, op } = metered);
  hooks = await new AccountHooks().start();
  await managedModel(stack, op, { alias: "flat", upstreamId: "mock", inputPerMtok: 0, outputPerMtok: 100_000_000 });
  // A second replica of managed-ai, jobs and the edge; edge-2's key expiry clock runs 3.5 days ahead.
  const managedAi2 = await stack.addReplica("managed-ai", "managed-ai-2");
  await stack.addReplica("jobs", "jobs-2");
  edge2 = await stack.addEdge("edge-2", { MANAGED_AI_GRPC_URL: managedAi2, KEY_EXPIRY_CLOCK_OFFSET_MS: String(3.5 * DAY) });
});
afterAll(async () => {
  await hooks?.close();
});

type Created = { id: string; secret: string; url: string; events: string[] };
type Delivery = { event_id: string; event: string; status: string; attempts: number; last_status: number | null; created_at: string };

async function webhook(c: Customer, url: string, events = EVENTS): Promise<Created> {
  const res = await call<{ data: Created }>(stack.edgeUrl, "POST", "/console/webhooks", { token: c.token, body: { url, events, description: "alerts" } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data;
}

async function deliveries(c: Customer, id: string): Promise<Delivery[]> {
  const res = await call<{ data: Delivery[] }>(stack.edgeUrl, "GET", `/console/webhooks/${id}/deliveries`, { token: c.token });
  expect(res.status).toBe(200);
  return res.body.data;
}

function chat(base: string, c: Customer, alias = "chat") {
  return fetch(`${base}/v1/apps/ai/${alias}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": c.key },
    body: JSON.stringify({ model: "flat", max_tokens: 3, messages: [{ role: "user", content: "Spend a little" }] }),
  });
}

async function spend(c: Customer, calls: number, bases: string[]): Promise<void> {
  const answers = await Promise.all(Array.from({ length: calls }, (_, i) => chat(bases[i % bases.length]!, c)));
  for (const res of answers) {
    expect(res.status).toBe(200);
    expect(res.headers.get("x-service-final-cost")).toBe((UNITS_PER_CALL / 10_000).toFixed(4));
    await res.arrayBuffer();
  }
}

describe("registering account webhooks", () => {
  it("refuses private-network and non-HTTPS targets, unknown events, and non-admins", async () => {
    const c = await customer(stack, op, { units: 0, alias: "chat", defaultModel: "flat" });
    for (const url of ["https://10.0.0.5/hook", "https://192.168.1.20/hook", "https://169.254.169.254/latest/meta-data", "https://[fd12::1]/x"]) {
      const res = await call<{ error: string; message: string }>(stack.edgeUrl, "POST", "/console/webhooks", {
        token: c.token,
        body: { url, events: ["ping"] },
      });
      expect(res.status, url).toBe(400);
      expect(res.body).toMatchObject({ error: "invalid_request", message: expect.stringMatching(/private, loopback or link-local/) });
    }
    for (const body of [
      { url: "http://example.com/hook", events: ["ping"] },
      { url: "ftp://example.com/hook", events: ["ping"] },
      { url: "https://example.com/hook", events: ["job.updated"] },
      { url: "https://example.com/hook", events: [] },
      { url: "https://example.com/hook", events: ["ping"], secret: "mine" },
    ]) {
      const res = await call(stack.edgeUrl, "POST", "/console/webhooks", { token: c.token, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
    expect((await call(stack.edgeUrl, "POST", "/console/webhooks", { body: { url: "https://example.com/h", events: ["ping"] } })).status).toBe(401);
    expect((await call(stack.edgeUrl, "PUT", "/console/alerts", { token: c.token, body: { balance_low_units: -1 } })).status).toBe(400);
    expect((await call(stack.edgeUrl, "GET", "/console/webhooks/whk_nope/deliveries", { token: c.token })).status).toBe(404);
  });

  it("shows the secret once, lists without it, and deletes", async () => {
    const c = await customer(stack, op, { units: 0, alias: "chat", defaultModel: "flat" });
    const made = await webhook(c, hooks.endpoint("/listed", "ok"), ["ping"]);
    expect(made).toMatchObject({ id: expect.stringMatching(/^whk_/), events: ["ping"], secret: expect.stringMatching(/^whsec_/) });
    const list = await call<{ data: Record<string, unknown>[] }>(stack.edgeUrl, "GET", "/console/webhooks", { token: c.token });
    expect(list.body).toEqual({ data: [{ id: made.id, url: made.url, events: ["ping"], description: "alerts", created_at: expect.any(String) }] });
    expect(JSON.stringify(list.body)).not.toContain(made.secret);
    const other = await customer(stack, op, { units: 0, alias: "chat", defaultModel: "flat" });
    expect((await call(stack.edgeUrl, "DELETE", `/console/webhooks/${made.id}`, { token: other.token })).status).toBe(404);
    expect((await call(stack.edgeUrl, "DELETE", `/console/webhooks/${made.id}`, { token: c.token })).status).toBe(204);
    expect((await call(stack.edgeUrl, "GET", "/console/webhooks", { token: c.token })).body).toEqual({ data: [] });
  });
});

describe("account webhook events", () => {
  it("delivers every event signed with the same event id on each retry, and gives up after 8 attempts", async () => {
    // Budget of five calls: 80 % after the fourth, 100 % at the fifth. Balance alert below 19,000: after the fourth.
    const c = await customer(stack, op, {
      units: 20_000,
      alias: "chat",
      defaultModel: "flat",
      keyPolicy: { budget_units: 5 * UNITS_PER_CALL, budget_period: "day" },
    });
    const flaky = await webhook(c, hooks.endpoint(`/flaky-${c.tenantId}`, "flaky"));
    const down = await webhook(c, hooks.endpoint(`/down-${c.tenantId}`, "down"));
    const alerts = await call(stack.edgeUrl, "PUT", "/console/alerts", { token: c.token, body: { balance_low_units: 19_000 } });
    expect(alerts.body).toEqual({ data: { balance_low_units: 19_000 } });
    expect((await call(stack.edgeUrl, "GET", "/console/alerts", { token: c.token })).body).toEqual({ data: { balance_low_units: 19_000 } });

    for (const hook of [flaky, down]) {
      const res = await call<{ data: { event_id: string } }>(stack.edgeUrl, "POST", `/console/webhooks/${hook.id}/test`, { token: c.token });
      expect(res.status).toBe(202);
      expect(res.body.data.event_id).toMatch(/^evt_/);
    }
    for (let i = 0; i < 5; i++) await spend(c, 1, [stack.edgeUrl]); // one at a time: each crossing at its call
    // A key made on edge-2, whose clock is 3.5 days ahead: 6.5 days before it expires there.
    const expiring = await call<{ data: { id: string; prefix: string; expires_at: string } }>(edge2, "POST", "/console/keys", {
      token: c.token,
      body: { name: "soon", scopes: ["ai:invoke"], expires_at: new Date(Date.now() + 10 * DAY).toISOString() },
    });
    expect(expiring.status).toBe(201);

    const settled = (list: Delivery[]) => EVENTS.every((e) => list.some((d) => d.event === e && d.status !== "pending"));
    const good = await eventually(`deliveries of ${flaky.id}`, () => deliveries(c, flaky.id), settled, 30_000, 200);
    const bad = await eventually(`deliveries of ${down.id}`, () => deliveries(c, down.id), settled, 30_000, 200);
    for (const event of EVENTS) {
      const ok = good.filter((d) => d.event === event);
      expect(ok, event).toHaveLength(1);
      expect(ok[0]).toMatchObject({ status: "delivered", attempts: 2, last_status: 200 });
      const posts = hooks.at(`/flaky-${c.tenantId}`, event);
      expect(posts.map((h) => h.status)).toEqual([500, 200]);
      // One event id across retries, the body's and the header's; every attempt signed with the webhook's secret.
      expect(new Set(posts.map((h) => h.eventId))).toEqual(new Set([ok[0]!.event_id]));
      for (const post of posts) {
        expect(post.json).toMatchObject({ event, event_id: ok[0]!.event_id, sent_at: expect.any(String), data: expect.any(Object) });
        expect(AccountHooks.signed(post, flaky.secret)).toBe(true);
        expect(AccountHooks.signed(post, down.secret)).toBe(false);
      }
      const gaveUp = bad.filter((d) => d.event === event);
      expect(gaveUp, event).toHaveLength(1);
      expect(gaveUp[0]).toMatchObject({ status: "exhausted", attempts: 8, last_status: 503 });
      expect(hooks.at(`/down-${c.tenantId}`, event)).toHaveLength(8);
    }
    const data = (event: string) => hooks.at(`/flaky-${c.tenantId}`, event)[0]!.json.data;
    expect(data("budget.threshold")).toMatchObject({ scope: "key", id: c.keyId, limit_units: 1500, spent_units: 1200, period: "day" });
    expect(data("budget.reached")).toMatchObject({ scope: "key", id: c.keyId, limit_units: 1500, spent_units: 1500, period: "day" });
    expect(Date.parse(data("budget.reached").resets_at)).toBeGreaterThan(Date.now());
    // The check reads the balance views after the charges' batch: the fourth call's, or the fifth's with it.
    expect(data("balance.low")).toEqual({ available_units: expect.any(Number), threshold_units: 19_000 });
    expect([18_800, 18_500]).toContain(data("balance.low").available_units);
    expect(data("key.expiring")).toEqual({ key_id: expiring.body.data.id, prefix: expiring.body.data.prefix, expires_at: expiring.body.data.expires_at });
    expect(data("ping")).toEqual({ webhook_id: flaky.id });
  });

  it("sends key.expiring 7 days and again 1 day before expiry, from the scan's own timer on an injected clock, once each across replicas", async () => {
    const c = await customer(stack, op, { units: 0, alias: "chat", defaultModel: "flat" });
    const hook = await webhook(c, hooks.endpoint(`/keys-${c.tenantId}`, "ok"), ["key.expiring"]);
    // edge-3's clock: 1 day and 3 seconds before the key expires. It notices the 7-day mark at once
    // and wakes for the 1-day mark three seconds later; edge-2 (3.5 days ahead) and edge 1 send nothing more.
    const edge3 = await stack.addEdge("edge-3", { KEY_EXPIRY_CLOCK_OFFSET_MS: String(9 * DAY - 3_000) });
    const expiresAt = new Date(Date.now() + 10 * DAY).toISOString();
    const key = await call<{ data: { id: string; prefix: string } }>(edge3, "POST", "/console/keys", {
      token: c.token,
      body: { name: "expiring", scopes: [], expires_at: expiresAt },
    });
    expect(key.status).toBe(201);
    const first = await eventually(
      "the 7-day notice",
      async () => hooks.at(`/keys-${c.tenantId}`),
      (got) => got.length >= 1,
      10_000,
      50,
    );
    const at7 = Date.now();
    const both = await eventually(
      "the 1-day notice",
      async () => hooks.at(`/keys-${c.tenantId}`),
      (got) => got.length >= 2,
      15_000,
      50,
    );
    expect(Date.now() - at7).toBeGreaterThan(1_000); // it waited for its time
    await new Promise((r) => setTimeout(r, 1_500));
    const got = hooks.at(`/keys-${c.tenantId}`);
    expect(got).toHaveLength(2);
    expect(first[0]!.eventId).not.toBe(both[1]!.eventId);
    for (const post of got) {
      expect(post.json).toMatchObject({ event: "key.expiring", data: { key_id: key.body.data.id, prefix: key.body.data.prefix, expires_at: expiresAt } });
      expect(AccountHooks.signed(post, hook.secret)).toBe(true);
    }
    const trail = await stack.sql<{ days: string }>(
      "jobs",
      "SELECT data->>'days_left' AS days FROM audit_events WHERE type = 'key.expiring' AND data->>'key_id' = $1 ORDER BY occurred_at",
      [key.body.data.id],
    );
    expect(trail.map((r) => r.days)).toEqual(["7", "1"]);
  });
});

describe("balance.low", () => {
  it("fires once per crossing while two replicas of every service spend at once, through allotments", async () => {
    const c = await customer(stack, op, { units: 20_000, alias: "chat", defaultModel: "flat" });
    const hook = await webhook(c, hooks.endpoint(`/low-${c.tenantId}`, "ok"), ["balance.low"]);
    expect((await call(stack.edgeUrl, "PUT", "/console/alerts", { token: c.token, body: { balance_low_units: 15_000 } })).status).toBe(200);
    const lows = () => hooks.at(`/low-${c.tenantId}`, "balance.low");

    await spend(c, 40, [stack.edgeUrl, edge2]); // 20,000 → 8,000, crossing 15,000 once
    expect((await balanceWithin1s(stack, c, { available_units: 8_000 })).available_units).toBe(8_000);
    await eventually(
      "the first balance.low",
      async () => lows(),
      (l) => l.length >= 1,
      15_000,
    );
    const allotments = await stack.sql<{ n: string }>("managed-ai", "SELECT count(*)::text AS n FROM allotments WHERE tenant_id = $1", [c.tenantId]);
    expect(Number(allotments[0]!.n)).toBeGreaterThan(0); // the money moved through allotments
    await new Promise((r) => setTimeout(r, 2_000));
    expect(lows()).toHaveLength(1);
    expect(lows()[0]!.json.data.threshold_units).toBe(15_000);
    expect(lows()[0]!.json.data.available_units).toBeLessThan(15_000);
    expect(AccountHooks.signed(lows()[0]!, hook.secret)).toBe(true);

    // Back above the threshold re-arms it; the next fall is a second crossing.
    const credit = await call(stack.edgeUrl, "POST", `/ops/ledger/tenants/${c.tenantId}/credits`, {
      token: op.token,
      body: { units: 12_000, reason: "top-up" },
    });
    expect(credit.status).toBe(201);
    await new Promise((r) => setTimeout(r, 1_000));
    await spend(c, 40, [edge2, stack.edgeUrl]); // 20,000 → 8,000 again
    await eventually(
      "the second balance.low",
      async () => lows(),
      (l) => l.length >= 2,
      15_000,
    );
    await new Promise((r) => setTimeout(r, 2_000));
    expect(lows()).toHaveLength(2);
    expect(new Set(lows().map((h: Hook) => h.eventId)).size).toBe(2);
    const logged = await deliveries(c, hook.id);
    expect(logged.filter((d) => d.event === "balance.low")).toHaveLength(2);
    expect(logged.every((d) => d.status === "delivered")).toBe(true);
  });
});
