import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, newTenant, signIn, startStack, type Stack } from "@gateway/testkit";

let stack: Stack;
let admin: string;

beforeAll(async () => {
  stack = await startStack({ services: [] });
  admin = await signIn(stack.edgeUrl, stack.admin.email, stack.admin.password);
});
afterAll(async () => {
  await stack?.shutdown();
});

type User = { id: string; email: string; tenant_id: string; tenant_name: string; tenant_role: string; platform_role: string | null; created_at: string };

describe("GET /ops/users", () => {
  it("lists users newest first with tenant and roles, never credentials; filters by email", async () => {
    const a = await newTenant(stack.edgeUrl, "alpha");
    const b = await newTenant(stack.edgeUrl, "beta");
    const res = await call<{ data: User[] }>(stack.edgeUrl, "GET", "/ops/users", { token: admin });
    expect(res.status).toBe(200);
    const emails = res.body.data.map((u) => u.email);
    expect(emails.indexOf(b.email)).toBeLessThan(emails.indexOf(a.email));
    expect(res.body.data.find((u) => u.email === a.email)).toEqual({
      id: a.userId,
      email: a.email,
      name: null,
      tenant_id: a.tenantId,
      tenant_name: expect.any(String),
      tenant_role: "owner",
      platform_role: null,
      created_at: expect.stringMatching(/Z$/),
    });
    expect(res.body.data.find((u) => u.email === stack.admin.email)?.platform_role).toBe("platform_admin");
    expect(JSON.stringify(res.body)).not.toMatch(/password|scrypt/i);

    const filtered = await call<{ data: User[] }>(stack.edgeUrl, "GET", `/ops/users?email=${encodeURIComponent(b.email.toUpperCase())}`, { token: admin });
    expect(filtered.body.data.map((u) => u.email)).toEqual([b.email]);
  });

  it("is for operators only: read roles may list, others are refused", async () => {
    expect((await call(stack.edgeUrl, "GET", "/ops/users")).status).toBe(401);
    const customer = await newTenant(stack.edgeUrl, "customer");
    expect((await call(stack.edgeUrl, "GET", "/ops/users", { token: customer.token })).body).toMatchObject({ error: "forbidden" });
    await call(stack.edgeUrl, "PUT", `/ops/users/${customer.userId}/platform-role`, { token: admin, body: { role: "finance" } });
    const finance = await signIn(stack.edgeUrl, customer.email, customer.password);
    expect((await call(stack.edgeUrl, "GET", "/ops/users", { token: finance })).status).toBe(200);
  });

  it("rejects a bad filter with the contract's error body", async () => {
    const res = await call(stack.edgeUrl, "GET", `/ops/users?email=${"x".repeat(300)}`, { token: admin });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: "invalid_request", request_id: expect.any(String) });
  });
});
