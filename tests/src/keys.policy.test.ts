import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, newTenant, startStack, type Stack } from "@gateway/testkit";
import { auditOf, createKey, withKey, type Tenant } from "./keys-helpers.js";

let stack: Stack;
let owner: Tenant;
let edge2: string;

beforeAll(async () => {
  stack = await startStack({
    services: ["jobs", "messaging"],
    env: { edge: { CONCURRENCY_LEASE_TTL_MS: "2000", GRPC_DEADLINE_MS: "5000" } },
  });
  edge2 = await stack.addEdge("edge-2");
  owner = await newTenant(stack.edgeUrl, "policy");
});
afterAll(async () => stack?.shutdown());

const get = (path: string, key: string, headers: Record<string, string> = {}, base = stack.edgeUrl) => call(base, "GET", path, withKey(key, headers));

describe("unknown, revoked and expired keys: 401", () => {
  it("refuses missing, malformed and unknown keys", async () => {
    expect((await call(stack.edgeUrl, "GET", "/v1/key")).status).toBe(401);
    expect((await get("/v1/key", "not-a-key")).status).toBe(401);
    expect((await get("/v1/key", `gw_AAAAAAAAAA_${"B".repeat(32)}`)).status).toBe(401);
    const res = await call(stack.edgeUrl, "GET", "/v1/key", { token: "a-session-jwt-is-not-a-key" });
    expect(res.body).toMatchObject({ error: "unauthorized", request_id: res.headers.get("x-request-id") });
  });

  it("disables an expired key the first time it is seen, recording key.expired once", async () => {
    const key = await createKey(stack, owner, { expires_at: new Date(Date.now() + 1_500).toISOString() });
    expect((await get("/v1/key", key.key)).status).toBe(200);
    await new Promise((r) => setTimeout(r, 1_600));
    const results = await Promise.all([get("/v1/key", key.key), get("/v1/key", key.key, {}, edge2), get("/v1/key", key.key)]);
    expect(results.map((r) => r.status)).toEqual([401, 401, 401]);
    const until = Date.now() + 5_000;
    let rows: unknown[] = [];
    while (Date.now() < until) {
      rows = await stack.sql("jobs", "SELECT event_id FROM audit_events WHERE type = 'key.expired' AND data->>'key_id' = $1", [key.id]);
      if (rows.length > 0) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    await new Promise((r) => setTimeout(r, 300));
    expect(await stack.sql("jobs", "SELECT event_id FROM audit_events WHERE type = 'key.expired' AND data->>'key_id' = $1", [key.id])).toHaveLength(1);
    expect((await stack.sql<{ expired_at: Date | null }>("edge", "SELECT expired_at FROM api_keys WHERE id = $1", [key.id]))[0]!.expired_at).not.toBeNull();
  });
});

describe("source address: 403", () => {
  it("allows IPv4 and IPv6 CIDRs from the trusted proxy's header only", async () => {
    const key = await createKey(stack, owner, { allowed_ips: ["203.0.113.0/24", "2001:db8::/32", "198.51.100.7"] });
    const via = (ip: string) => get("/v1/key", key.key, { "X-Connecting-IP": ip });
    expect((await via("203.0.113.77")).status).toBe(200);
    expect((await via("198.51.100.7")).status).toBe(200);
    expect((await via("2001:db8:abcd::1")).status).toBe(200);
    expect((await via("2001:0db8::ffff")).status).toBe(200);
    expect((await via("2001:db9::1")).status).toBe(403);
    expect((await via("198.51.100.8")).status).toBe(403);
    const denied = await via("192.0.2.1");
    expect(denied.status).toBe(403);
    expect(denied.body.error).toBe("forbidden");
    const events = await auditOf(stack, denied.headers.get("x-request-id")!);
    expect(events[0]).toMatchObject({ type: "key.policy_denied", data: { reason: "ip_not_allowed", client_ip: "192.0.2.1" } });
  });

  it("never reads X-Forwarded-For or X-Real-IP", async () => {
    const key = await createKey(stack, owner, { allowed_ips: ["203.0.113.0/24"] });
    const res = await get("/v1/key", key.key, { "X-Forwarded-For": "203.0.113.5", "X-Real-IP": "203.0.113.5" });
    expect(res.status).toBe(403); // the client is the TCP peer, 127.0.0.1
  });

  it("ignores the header when the peer is not a trusted proxy", async () => {
    const untrusting = await stack.addEdge("edge-3", { TRUSTED_PROXY_CIDRS: "10.0.0.0/8" });
    const key = await createKey(stack, owner, { allowed_ips: ["203.0.113.0/24"] });
    expect((await get("/v1/key", key.key, { "X-Connecting-IP": "203.0.113.5" }, untrusting)).status).toBe(403);
    const local = await createKey(stack, owner, { allowed_ips: ["127.0.0.1"] });
    expect((await get("/v1/key", local.key, { "X-Connecting-IP": "203.0.113.5" }, untrusting)).status).toBe(200);
    await stack.stop("edge-3");
  });
});

describe("scopes: 403", () => {
  it("an empty scope list is denied on scope-protected routes; '*' allows all", async () => {
    const none = await createKey(stack, owner, { scopes: [] });
    const other = await createKey(stack, owner, { scopes: ["ai:invoke"] });
    const jobs = await createKey(stack, owner, { scopes: ["jobs:read"] });
    const all = await createKey(stack, owner, { scopes: ["*"] });
    expect((await get("/v1/jobs", none.key)).status).toBe(403);
    expect((await get("/v1/jobs", other.key)).status).toBe(403);
    expect((await get("/v1/jobs", jobs.key)).body).toEqual({ data: [] });
    expect((await get("/v1/jobs", all.key)).status).toBe(200);
    expect((await get("/v1/jobs/job_unknown", all.key)).status).toBe(404);
    // Routes that need no scope accept any valid key, even one with no scopes.
    expect((await get("/v1/apps/socialops/providers", none.key)).status).toBe(200);
  });

  it("checks the address before the scope", async () => {
    const key = await createKey(stack, owner, { scopes: [], allowed_ips: ["10.1.1.1"] });
    const res = await get("/v1/jobs", key.key);
    const events = await auditOf(stack, res.headers.get("x-request-id")!);
    expect(events[0]!.data.reason).toBe("ip_not_allowed");
  });
});

describe("daily quota: 429", () => {
  it("admits exactly the quota under 50 concurrent requests across two replicas", async () => {
    const key = await createKey(stack, owner, { daily_quota: 20 });
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => get("/v1/key", key.key, {}, i % 2 ? edge2 : stack.edgeUrl)));
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(20);
    expect(statuses.filter((s) => s === 429)).toHaveLength(30);
    const denied = results.find((r) => r.status === 429)!;
    expect(denied.body.error).toBe("rate_limited");
    const retry = Number(denied.headers.get("retry-after"));
    expect(retry).toBeGreaterThanOrEqual(1);
    expect(retry).toBeLessThanOrEqual(86_400);
    // key.quota_exceeded once for the day, key.policy_denied for each denial.
    await new Promise((r) => setTimeout(r, 500));
    const quota = await stack.sql("jobs", "SELECT 1 FROM audit_events WHERE type = 'key.quota_exceeded' AND data->>'key_id' = $1", [key.id]);
    expect(quota).toHaveLength(1);
    const denials = await stack.sql(
      "jobs",
      "SELECT 1 FROM audit_events WHERE type = 'key.policy_denied' AND data->>'key_id' = $1 AND data->>'reason' = 'daily_quota'",
      [key.id],
    );
    expect(denials).toHaveLength(30);
  });

  it("counts only requests that passed authentication and policy", async () => {
    const key = await createKey(stack, owner, { daily_quota: 2, scopes: [] });
    for (let i = 0; i < 3; i++) expect((await get("/v1/jobs", key.key)).status).toBe(403);
    expect((await get("/v1/key", key.key)).status).toBe(200);
    expect((await get("/v1/key", key.key)).status).toBe(200);
    expect((await get("/v1/key", key.key)).status).toBe(429);
  });
});

describe("per-minute rate: 429 with Retry-After", () => {
  it("allows the rate in any 60 s and tells when to retry", async () => {
    const key = await createKey(stack, owner, { rate_limit_per_minute: 5 });
    const statuses: number[] = [];
    let last: Awaited<ReturnType<typeof get>> | undefined;
    for (let i = 0; i < 7; i++) {
      last = await get("/v1/key", key.key, {}, i % 2 ? edge2 : stack.edgeUrl);
      statuses.push(last.status);
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429]);
    const retry = Number(last!.headers.get("retry-after"));
    expect(retry).toBeGreaterThanOrEqual(55);
    expect(retry).toBeLessThanOrEqual(60);
  });
});

describe("concurrency: 429", () => {
  it("holds slots across two edge processes until responses end, releases on client disconnect and on crash by expiry", async () => {
    const key = await createKey(stack, owner, { concurrency_limit: 2 });
    const jobs = stack.process("jobs");
    jobs.signal("SIGSTOP"); // /v1/jobs now waits on the jobs service: requests stay in flight
    try {
      const slow1 = get("/v1/jobs", key.key, {}, stack.edgeUrl);
      const slow2 = get("/v1/jobs", key.key, {}, edge2);
      await new Promise((r) => setTimeout(r, 300));
      const third = await get("/v1/key", key.key, {}, stack.edgeUrl);
      expect(third.status).toBe(429);
      expect((await get("/v1/key", key.key, {}, edge2)).status).toBe(429);
      jobs.signal("SIGCONT"); // the audit trail lives in jobs too
      const events = await auditOf(stack, third.headers.get("x-request-id")!);
      expect(events[0]!.data.reason).toBe("concurrency");
      expect((await slow1).status).toBe(200);
      expect((await slow2).status).toBe(200);
      expect((await get("/v1/key", key.key)).status).toBe(200);

      // A client that goes away gives its slot back.
      jobs.signal("SIGSTOP");
      const abort = new AbortController();
      const gone = fetch(`${stack.edgeUrl}/v1/jobs`, { headers: { "X-API-Key": key.key }, signal: abort.signal }).catch(() => "aborted");
      const held = get("/v1/jobs", key.key, {}, edge2);
      await new Promise((r) => setTimeout(r, 300));
      expect((await get("/v1/key", key.key)).status).toBe(429);
      abort.abort();
      expect(await gone).toBe("aborted");
      await new Promise((r) => setTimeout(r, 200));
      expect((await get("/v1/key", key.key)).status).toBe(200);

      // A replica that dies with a request in flight: its slot expires (lease TTL 2 s here).
      const crashing = get("/v1/jobs", key.key, {}, stack.edgeUrl).catch(() => "crashed");
      await new Promise((r) => setTimeout(r, 300));
      expect((await get("/v1/key", key.key, {}, edge2)).status).toBe(429);
      await stack.stop("edge", "SIGKILL");
      expect(await crashing).toBe("crashed");
      expect((await get("/v1/key", key.key, {}, edge2)).status).toBe(429);
      await new Promise((r) => setTimeout(r, 2_300));
      expect((await get("/v1/key", key.key, {}, edge2)).status).toBe(200);
      jobs.signal("SIGCONT");
      expect((await held).status).toBe(200);
    } finally {
      jobs.signal("SIGCONT");
      if (!stack.process("edge").running) await stack.start("edge");
    }
  });
});

describe("changes reach every replica at once", () => {
  it("rotation on one edge process is visible on another immediately", async () => {
    const key = await createKey(stack, owner);
    expect((await get("/v1/key", key.key, {}, edge2)).status).toBe(200); // cached on edge-2
    const rotated = await call(stack.edgeUrl, "POST", `/console/keys/${key.id}/rotate`, { token: owner.token });
    expect((await get("/v1/key", key.key, {}, edge2)).status).toBe(401);
    expect((await get("/v1/key", rotated.body.data.key, {}, edge2)).status).toBe(200);
  });

  it("revocation on one edge process is visible on another immediately", async () => {
    const key = await createKey(stack, owner);
    expect((await get("/v1/key", key.key, {}, edge2)).status).toBe(200);
    await call(stack.edgeUrl, "DELETE", `/console/keys/${key.id}`, { token: owner.token });
    expect((await get("/v1/key", key.key, {}, edge2)).status).toBe(401);
  });

  it("on the metered invocation routes (the lean path) too: rotation and revocation on one edge stop the key on another at once", async () => {
    // No managed-ai in this stack: a key that passes the policy gets 503 from the call behind it, never 401.
    const invoke = (key: string, base: string) =>
      call(base, "POST", "/v1/apps/ai/any/v1/chat/completions", { ...withKey(key), body: { messages: [{ role: "user", content: "hi" }] } });
    const key = await createKey(stack, owner);
    const first = await invoke(key.key, edge2); // cached on edge-2
    expect(first.status).not.toBe(401);
    expect(first.headers.get("x-request-id")).toMatch(/^req_/);
    const rotated = await call(stack.edgeUrl, "POST", `/console/keys/${key.id}/rotate`, { token: owner.token });
    expect((await invoke(key.key, edge2)).status).toBe(401);
    expect((await invoke(rotated.body.data.key, edge2)).status).not.toBe(401);
    await call(stack.edgeUrl, "DELETE", `/console/keys/${key.id}`, { token: owner.token });
    const revoked = await invoke(rotated.body.data.key, edge2);
    expect(revoked.status).toBe(401);
    expect(revoked.body.error).toBe("unauthorized");
  });
});

describe("secrets", () => {
  it("no key plaintext appears in any log line or audit event", async () => {
    const keys = await stack.sql<{ id: string }>("edge", "SELECT id FROM api_keys");
    expect(keys.length).toBeGreaterThan(10);
    const created = await createKey(stack, owner, { scopes: [] });
    await get("/v1/jobs", created.key);
    await get("/v1/key", created.key, {}, edge2);
    const logs = JSON.stringify([...stack.logs("edge"), ...stack.logs("edge-2"), ...stack.logs("jobs"), ...stack.logs("messaging")]);
    expect(logs).not.toContain(created.key);
    expect(logs).not.toMatch(/gw_[0-9A-Za-z]{10}_[0-9A-Za-z]{32}/);
    const events = JSON.stringify(await stack.sql("jobs", "SELECT data FROM audit_events"));
    expect(events).not.toMatch(/gw_[0-9A-Za-z]{10}_[0-9A-Za-z]{32}/);
  });
});
