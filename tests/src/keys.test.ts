import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, newTenant, startStack, type Stack } from "@gateway/testkit";
import { auditOf, createKey, withKey, type Tenant } from "./keys-helpers.js";

let stack: Stack;
let owner: Tenant;

beforeAll(async () => {
  stack = await startStack({ services: ["jobs", "messaging", "managed-ai"] });
  owner = await newTenant(stack.edgeUrl, "keys");
});
afterAll(async () => stack?.shutdown());

describe("managing keys", () => {
  it("creates a key with its policy and shows the plaintext once", async () => {
    const res = await call(stack.edgeUrl, "POST", "/console/keys", {
      token: owner.token,
      body: {
        name: "ci",
        scopes: ["jobs:read", "ai:invoke"],
        service_aliases: ["ai-model:chat"],
        allowed_ips: ["10.0.0.0/8", "2001:db8::/32"],
        daily_quota: 1000,
        rate_limit_per_minute: 60,
        concurrency_limit: 4,
        expires_at: "2099-01-01T00:00:00Z",
      },
    });
    expect(res.status).toBe(201);
    const key = res.body.data;
    expect(key).toEqual({
      id: expect.stringMatching(/^key_/),
      key: expect.stringMatching(/^gw_[0-9A-Za-z]{10}_[0-9A-Za-z]{32}$/),
      name: "ci",
      prefix: expect.stringMatching(/^gw_[0-9A-Za-z]{10}$/),
      scopes: ["jobs:read", "ai:invoke"],
      service_aliases: ["ai-model:chat"],
      allowed_ips: ["10.0.0.0/8", "2001:db8::/32"],
      daily_quota: 1000,
      rate_limit_per_minute: 60,
      concurrency_limit: 4,
      expires_at: "2099-01-01T00:00:00.000Z",
      created_at: expect.stringMatching(/Z$/),
      budget: null,
    });
    expect(key.key.startsWith(key.prefix)).toBe(true);

    const list = await call(stack.edgeUrl, "GET", "/console/keys", { token: owner.token });
    const listed = list.body.data.find((k: { id: string }) => k.id === key.id);
    expect(listed).toEqual({ ...key, key: undefined });
    expect(JSON.stringify(list.body)).not.toContain(key.key);
    // Only the hash is stored.
    const rows = await stack.sql<{ hash: string }>("edge", "SELECT hash FROM api_keys WHERE id = $1", [key.id]);
    expect(rows[0]!.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(await stack.sql("edge", "SELECT * FROM api_keys WHERE id = $1", [key.id]))).not.toContain(key.key);
  });

  it("defaults to no scopes and no limits", async () => {
    const res = await call(stack.edgeUrl, "POST", "/console/keys", { token: owner.token, body: {} });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({
      scopes: [],
      service_aliases: null,
      allowed_ips: null,
      daily_quota: null,
      rate_limit_per_minute: null,
      concurrency_limit: null,
      expires_at: null,
    });
  });

  it("rejects invalid policy fields with 400", async () => {
    for (const body of [
      { scopes: ["root"] },
      { service_aliases: ["chat"] },
      { allowed_ips: ["300.1.1.1"] },
      { allowed_ips: ["10.0.0.0/33"] },
      { daily_quota: 0 },
      { rate_limit_per_minute: 1.5 },
      { expires_at: "2000-01-01T00:00:00Z" },
      { expires_at: "tomorrow" },
      { unknown_field: true },
    ]) {
      const res = await call(stack.edgeUrl, "POST", "/console/keys", { token: owner.token, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error).toBe("invalid_request");
    }
  });

  it("accepts both carriers: X-API-Key and Authorization: Bearer", async () => {
    const key = await createKey(stack, owner);
    expect((await call(stack.edgeUrl, "GET", "/v1/key", withKey(key.key))).body.data).toMatchObject({
      id: key.id,
      prefix: key.prefix,
      tenant_id: owner.tenantId,
    });
    expect((await call(stack.edgeUrl, "GET", "/v1/key", { token: key.key })).status).toBe(200);
    expect((await call(stack.edgeUrl, "GET", "/v1/apps/socialops/providers", { token: key.key })).body).toEqual({
      data: [{ id: "generic", name: "Generic webhook" }],
    });
  });

  it("rotates: a new secret for the same key; the old one fails at once", async () => {
    const key = await createKey(stack, owner);
    expect((await call(stack.edgeUrl, "GET", "/v1/key", withKey(key.key))).status).toBe(200);
    const rotated = await call(stack.edgeUrl, "POST", `/console/keys/${key.id}/rotate`, { token: owner.token });
    expect(rotated.status).toBe(200);
    expect(rotated.body.data).toMatchObject({ id: key.id, scopes: ["*"], key: expect.stringMatching(/^gw_/) });
    expect(rotated.body.data.key).not.toBe(key.key);
    expect((await call(stack.edgeUrl, "GET", "/v1/key", withKey(key.key))).status).toBe(401);
    expect((await call(stack.edgeUrl, "GET", "/v1/key", withKey(rotated.body.data.key))).body.data.id).toBe(key.id);
  });

  it("revokes: the key fails at once and leaves the list", async () => {
    const key = await createKey(stack, owner);
    expect((await call(stack.edgeUrl, "GET", "/v1/key", withKey(key.key))).status).toBe(200);
    expect((await call(stack.edgeUrl, "DELETE", `/console/keys/${key.id}`, { token: owner.token })).status).toBe(204);
    expect((await call(stack.edgeUrl, "GET", "/v1/key", withKey(key.key))).status).toBe(401);
    const list = await call(stack.edgeUrl, "GET", "/console/keys", { token: owner.token });
    expect(list.body.data.some((k: { id: string }) => k.id === key.id)).toBe(false);
    expect((await call(stack.edgeUrl, "DELETE", `/console/keys/${key.id}`, { token: owner.token })).status).toBe(404);
    expect((await call(stack.edgeUrl, "POST", `/console/keys/${key.id}/rotate`, { token: owner.token })).status).toBe(404);
  });

  it("keeps tenants apart and keys to tenant admins", async () => {
    const key = await createKey(stack, owner);
    const other = await newTenant(stack.edgeUrl, "other");
    expect((await call(stack.edgeUrl, "DELETE", `/console/keys/${key.id}`, { token: other.token })).status).toBe(404);
    expect((await call(stack.edgeUrl, "POST", `/console/keys/${key.id}/rotate`, { token: other.token })).status).toBe(404);
    expect((await call(stack.edgeUrl, "GET", "/console/keys", { token: other.token })).body.data).toEqual([]);

    // A member (not owner or admin) of the tenant may not manage keys.
    await stack.sql("edge", "UPDATE users SET tenant_role = 'member' WHERE id = $1", [other.userId]);
    const member = await call(stack.edgeUrl, "POST", "/auth/login", { body: { email: other.email, password: other.password } });
    expect((await call(stack.edgeUrl, "GET", "/console/keys", { token: member.body.token })).status).toBe(403);
    expect((await call(stack.edgeUrl, "POST", "/console/keys", { token: member.body.token, body: {} })).status).toBe(403);
    expect((await call(stack.edgeUrl, "GET", "/console/keys")).status).toBe(401);
  });

  it("records create, rotate and revoke in the audit trail, never with the secret", async () => {
    const created = await call(stack.edgeUrl, "POST", "/console/keys", { token: owner.token, body: { name: "audited" } });
    const rotated = await call(stack.edgeUrl, "POST", `/console/keys/${created.body.data.id}/rotate`, { token: owner.token });
    const revoked = await call(stack.edgeUrl, "DELETE", `/console/keys/${created.body.data.id}`, { token: owner.token });
    const events = [
      ...(await auditOf(stack, created.headers.get("x-request-id")!)),
      ...(await auditOf(stack, rotated.headers.get("x-request-id")!)),
      ...(await auditOf(stack, revoked.headers.get("x-request-id")!)),
    ];
    expect(events.map((e) => e.type)).toEqual(["key.created", "key.rotated", "key.revoked"]);
    for (const e of events) expect(e.data).toMatchObject({ key_id: created.body.data.id, tenant_id: owner.tenantId });
    expect(events[0]!.data.actor).toBe(`user:${owner.userId}`);
    const text = JSON.stringify(events);
    expect(text).not.toContain(created.body.data.key);
    expect(text).not.toContain(rotated.body.data.key);
  });
});

describe("request views", () => {
  it("show a denied request with its key and its key.policy_denied event, to the owning tenant's admins only", async () => {
    const key = await createKey(stack, owner, { name: "viewer", scopes: [] });
    const denied = await call(stack.edgeUrl, "GET", "/v1/jobs", withKey(key.key));
    expect(denied.status).toBe(403);
    const requestId = denied.headers.get("x-request-id")!;
    await auditOf(stack, requestId);

    const view = await call(stack.edgeUrl, "GET", `/console/requests/${requestId}`, { token: owner.token });
    expect(view.status).toBe(200);
    expect(view.body.data).toEqual({
      request_id: requestId,
      key: { id: key.id, name: "viewer", prefix: key.prefix },
      usage: null,
      audit: [
        {
          event_id: expect.any(String),
          type: "key.policy_denied",
          source: "edge",
          occurred_at: expect.any(String),
          data: { key_id: key.id, tenant_id: owner.tenantId, reason: "scope_missing", method: "GET", path: "/v1/jobs", client_ip: "127.0.0.1" },
        },
      ],
    });
    expect(JSON.stringify(view.body)).not.toContain(key.key);

    const stranger = await newTenant(stack.edgeUrl, "stranger");
    expect((await call(stack.edgeUrl, "GET", `/console/requests/${requestId}`, { token: stranger.token })).status).toBe(404);
    expect((await call(stack.edgeUrl, "GET", `/console/requests/req_doesnotexist`, { token: owner.token })).status).toBe(404);
    expect((await call(stack.edgeUrl, "GET", `/console/requests/${requestId}`)).status).toBe(401);
  });
});
