import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, newTenant, signIn, startStack, type Stack } from "@gateway/testkit";

let stack: Stack;
let admin: string;

beforeAll(async () => {
  stack = await startStack({ services: ["ledger", "jobs"] });
  admin = await signIn(stack.edgeUrl, stack.admin.email, stack.admin.password);
});
afterAll(async () => stack?.shutdown());

const url = () => stack.edgeUrl;

describe("registration and sign-in", () => {
  it("registers a user as the owner of a new tenant and signs in", async () => {
    const email = `Owner-${stack.runId}@Example.com`;
    const reg = await call(url(), "POST", "/auth/register", { body: { email, password: "a-long-enough-password", name: "Olga", tenant_name: "Acme" } });
    expect(reg.status).toBe(201);
    expect(reg.body).toEqual({ user_id: expect.stringMatching(/^usr_/), tenant_id: expect.stringMatching(/^ten_/) });
    const login = await call(url(), "POST", "/auth/login", { body: { email: email.toLowerCase(), password: "a-long-enough-password" } });
    expect(login.status).toBe(200);
    expect(login.body).toEqual({ token: expect.any(String), refresh_token: expect.any(String), token_type: "Bearer", expires_in: 900 });
    const me = await call(url(), "GET", "/console/me", { token: login.body.token });
    expect(me.body.data).toMatchObject({ user_id: reg.body.user_id, tenant_id: reg.body.tenant_id, tenant_role: "owner", platform_role: null, name: "Olga" });
  });

  it("refuses duplicates, short passwords, unknown fields; answers wrong credentials alike", async () => {
    const t = await newTenant(url(), "dup");
    expect((await call(url(), "POST", "/auth/register", { body: { email: t.email.toUpperCase(), password: "another-long-password" } })).status).toBe(409);
    expect((await call(url(), "POST", "/auth/register", { body: { email: "x@example.com", password: "short" } })).status).toBe(400);
    expect((await call(url(), "POST", "/auth/register", { body: { email: "not-an-email", password: "a-long-enough-password" } })).status).toBe(400);
    expect((await call(url(), "POST", "/auth/register", { body: { email: "y@example.com", password: "a-long-enough-password", role: "owner" } })).status).toBe(
      400,
    );
    const wrongPassword = await call(url(), "POST", "/auth/login", { body: { email: t.email, password: "wrong-password-123" } });
    const unknownEmail = await call(url(), "POST", "/auth/login", { body: { email: "nobody@example.com", password: "wrong-password-123" } });
    expect(wrongPassword.status).toBe(401);
    expect(unknownEmail.status).toBe(401);
    expect(wrongPassword.body.message).toBe(unknownEmail.body.message);
  });
});

describe("refresh tokens", () => {
  it("rotate on every use; a used one signs the whole session out", async () => {
    const t = await newTenant(url(), "refresh");
    const first = await call(url(), "POST", "/auth/login", { body: { email: t.email, password: t.password } });
    const second = await call(url(), "POST", "/auth/refresh", { body: { refresh_token: first.body.refresh_token } });
    expect(second.status).toBe(200);
    expect(second.body.refresh_token).not.toBe(first.body.refresh_token);
    expect((await call(url(), "GET", "/console/balance", { token: second.body.token })).status).toBe(200);

    // The first refresh token again: reuse. The session ends, with every token of it.
    const reuse = await call(url(), "POST", "/auth/refresh", { body: { refresh_token: first.body.refresh_token } });
    expect(reuse.status).toBe(401);
    expect((await call(url(), "GET", "/console/balance", { token: second.body.token })).status).toBe(401);
    expect((await call(url(), "GET", "/console/balance", { token: first.body.token })).status).toBe(401);
    expect((await call(url(), "POST", "/auth/refresh", { body: { refresh_token: second.body.refresh_token } })).status).toBe(401);
    // Other sessions of the same user are not affected.
    expect((await call(url(), "GET", "/console/balance", { token: t.token })).status).toBe(200);
  });

  it("are answered once when two uses race", async () => {
    const t = await newTenant(url(), "race");
    const login = await call(url(), "POST", "/auth/login", { body: { email: t.email, password: t.password } });
    const results = await Promise.all([1, 2].map(() => call(url(), "POST", "/auth/refresh", { body: { refresh_token: login.body.refresh_token } })));
    expect(results.map((r) => r.status).sort()).toEqual([200, 401]);
  });

  it("reject a token that was never issued without touching any session", async () => {
    const t = await newTenant(url(), "forged");
    expect((await call(url(), "POST", "/auth/refresh", { body: { refresh_token: "rt_made-up" } })).status).toBe(401);
    expect((await call(url(), "GET", "/console/balance", { token: t.token })).status).toBe(200);
  });
});

describe("logout", () => {
  it("ends the access and refresh token at once", async () => {
    const t = await newTenant(url(), "logout");
    const login = await call(url(), "POST", "/auth/login", { body: { email: t.email, password: t.password } });
    expect((await call(url(), "GET", "/console/balance", { token: login.body.token })).status).toBe(200);
    const out = await call(url(), "POST", "/auth/logout", { token: login.body.token });
    expect(out.status).toBe(204);
    expect((await call(url(), "GET", "/console/balance", { token: login.body.token })).status).toBe(401);
    expect((await call(url(), "POST", "/auth/refresh", { body: { refresh_token: login.body.refresh_token } })).status).toBe(401);
  });

  it("ends the session on every edge replica at once", async () => {
    const second = await stack.addEdge("edge-2");
    const t = await newTenant(url(), "replicas");
    expect((await call(second, "GET", "/console/balance", { token: t.token })).status).toBe(200); // cached on edge-2
    await call(url(), "POST", "/auth/logout", { token: t.token });
    expect((await call(second, "GET", "/console/balance", { token: t.token })).status).toBe(401);
    await stack.stop("edge-2");
  });

  it("rejects tampered, foreign and expired tokens", async () => {
    const t = await newTenant(url(), "tamper");
    const [h, p, s] = t.token.split(".");
    const payload = JSON.parse(Buffer.from(p!, "base64url").toString());
    const forged = `${h}.${Buffer.from(JSON.stringify({ ...payload, sub: "usr_someone_else" })).toString("base64url")}.${s}`;
    expect((await call(url(), "GET", "/console/balance", { token: forged })).status).toBe(401);
    const none = `${Buffer.from('{"alg":"none","typ":"JWT"}').toString("base64url")}.${p}.`;
    expect((await call(url(), "GET", "/console/balance", { token: none })).status).toBe(401);
    expect((await call(url(), "GET", "/console/balance", { token: "garbage" })).status).toBe(401);
  });
});

describe("platform roles", () => {
  async function operator(role: "admin" | "finance" | "platform_admin") {
    const t = await newTenant(url(), role);
    const set = await call(url(), "PUT", `/ops/users/${t.userId}/platform-role`, { token: admin, body: { role } });
    expect(set.status).toBe(200);
    expect(set.body.data).toEqual({ user_id: t.userId, platform_role: role });
    return t;
  }

  it("finance and admin read /ops but cannot write; platform_admin can", async () => {
    const customer = await newTenant(url(), "customer");
    for (const role of ["finance", "admin"] as const) {
      const op = await operator(role);
      expect((await call(url(), "GET", `/ops/ledger/tenants/${customer.tenantId}`, { token: op.token })).status, role).toBe(200);
      const write = await call(url(), "POST", `/ops/ledger/tenants/${customer.tenantId}/credits`, { token: op.token, body: { units: 5, reason: "x" } });
      expect(write.status, role).toBe(403);
      expect(write.body.error).toBe("forbidden");
      expect((await call(url(), "PUT", `/ops/users/${customer.userId}/platform-role`, { token: op.token, body: { role: "finance" } })).status).toBe(403);
    }
    const pa = await operator("platform_admin");
    expect((await call(url(), "POST", `/ops/ledger/tenants/${customer.tenantId}/credits`, { token: pa.token, body: { units: 5, reason: "x" } })).status).toBe(
      201,
    );
  });

  it("a user without a platform role gets 403 on /ops; no token gets 401", async () => {
    const t = await newTenant(url(), "plain");
    expect((await call(url(), "GET", `/ops/ledger/tenants/${t.tenantId}`, { token: t.token })).status).toBe(403);
    expect((await call(url(), "GET", `/ops/ledger/tenants/${t.tenantId}`)).status).toBe(401);
  });

  it("a demotion applies at once", async () => {
    const op = await operator("finance");
    const customer = await newTenant(url(), "c2");
    expect((await call(url(), "GET", `/ops/ledger/tenants/${customer.tenantId}`, { token: op.token })).status).toBe(200);
    expect((await call(url(), "PUT", `/ops/users/${op.userId}/platform-role`, { token: admin, body: { role: null } })).status).toBe(200);
    expect((await call(url(), "GET", `/ops/ledger/tenants/${customer.tenantId}`, { token: op.token })).status).toBe(403);
  });

  it("keeps at least one platform_admin and validates its input", async () => {
    const me = await call(url(), "GET", "/console/me", { token: admin });
    const others = await stack.sql<{ n: number }>("edge", "SELECT count(*)::int AS n FROM users WHERE platform_role = 'platform_admin'");
    if (others[0]!.n === 1) {
      const lastOne = await call(url(), "PUT", `/ops/users/${me.body.data.user_id}/platform-role`, { token: admin, body: { role: null } });
      expect(lastOne.status).toBe(409);
    }
    expect((await call(url(), "PUT", `/ops/users/usr_nobody/platform-role`, { token: admin, body: { role: "finance" } })).status).toBe(404);
    expect((await call(url(), "PUT", `/ops/users/${me.body.data.user_id}/platform-role`, { token: admin, body: { role: "root" } })).status).toBe(400);
    expect((await call(url(), "PUT", `/ops/users/bad%20id/platform-role`, { token: admin, body: { role: "finance" } })).status).toBe(400);
  });

  it("bootstraps the first platform admin once, idempotently across restarts", async () => {
    await stack.stop("edge");
    await stack.start("edge");
    const rows = await stack.sql<{ platform_role: string }>("edge", "SELECT platform_role FROM users WHERE email = $1", [stack.admin.email]);
    expect(rows).toEqual([{ platform_role: "platform_admin" }]);
    expect((await call(url(), "GET", "/console/me", { token: await signIn(url(), stack.admin.email, stack.admin.password) })).body.data.platform_role).toBe(
      "platform_admin",
    );
  });
});

describe("secrets", () => {
  it("never logs passwords or tokens", async () => {
    const t = await newTenant(url(), "secret");
    await call(url(), "POST", "/auth/login", { body: { email: t.email, password: t.password } });
    for (const service of ["edge", "ledger", "jobs"] as const) {
      const text = JSON.stringify(stack.logs(service));
      expect(text).not.toContain(t.password);
      expect(text).not.toContain(stack.admin.password);
      expect(text).not.toContain(t.token);
    }
  });
});
