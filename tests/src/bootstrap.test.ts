import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, signIn, startStack, type Stack } from "@gateway/testkit";

// Bootstrap only creates (docs/decisions/0181): an account that exists under
// BOOTSTRAP_ADMIN_EMAIL without the platform_admin role is never promoted.
let stack: Stack;

beforeAll(async () => {
  stack = await startStack({ services: [] });
});
afterAll(async () => stack?.shutdown());

describe("the bootstrap platform admin", () => {
  it("is not taken over by whoever registered the address first: that account stays a customer, the configured password does not sign in, the refusal is an error log line without the password", async () => {
    const email = `ops-${stack.runId}@example.com`;
    const squatterPassword = "squatter-chose-this-password";
    const bootstrapPassword = `bootstrap-secret-${stack.runId}`;
    const reg = await call(stack.edgeUrl, "POST", "/auth/register", { body: { email, password: squatterPassword } });
    expect(reg.status).toBe(201);

    // The operator later names that address; a replica starts with it.
    const edge2 = await stack.addEdge("edge-2", { BOOTSTRAP_ADMIN_EMAIL: email.toUpperCase(), BOOTSTRAP_ADMIN_PASSWORD: bootstrapPassword });
    const rows = await stack.sql<{ id: string; platform_role: string | null }>("edge", "SELECT id, platform_role FROM users WHERE email = $1", [email]);
    expect(rows).toEqual([{ id: reg.body.user_id, platform_role: null }]);
    const withBootstrap = await call(edge2, "POST", "/auth/login", { body: { email, password: bootstrapPassword } });
    expect(withBootstrap.status).toBe(401);
    const squatter = await signIn(edge2, email, squatterPassword);
    const ops = await call(edge2, "GET", "/ops/users", { token: squatter });
    expect(ops.status).toBe(403);

    const refusal = await stack.waitForLog("edge-2", (l) => typeof l.msg === "string" && l.msg.startsWith("bootstrap refused"));
    expect(refusal).toMatchObject({ level: "error", email, user_id: reg.body.user_id, platform_role: null });
    expect(JSON.stringify(stack.logs("edge-2"))).not.toContain(bootstrapPassword);
    expect(JSON.stringify(stack.logs("edge-2"))).not.toContain(squatterPassword);
    await stack.stop("edge-2");
  });

  it("is idempotent for an existing platform admin: a restart keeps the account and its role, without a refusal", async () => {
    const before = await stack.sql<{ id: string }>("edge", "SELECT id FROM users WHERE email = $1 AND platform_role = 'platform_admin'", [stack.admin.email]);
    expect(before).toHaveLength(1);
    await stack.stop("edge");
    await stack.start("edge");
    const after = await stack.sql<{ id: string; platform_role: string }>("edge", "SELECT id, platform_role FROM users WHERE email = $1", [stack.admin.email]);
    expect(after).toEqual([{ id: before[0]!.id, platform_role: "platform_admin" }]);
    expect(stack.logs("edge").some((l) => typeof l.msg === "string" && l.msg.startsWith("bootstrap refused"))).toBe(false);
    const token = await signIn(stack.edgeUrl, stack.admin.email, stack.admin.password);
    expect((await call(stack.edgeUrl, "GET", "/ops/users", { token })).status).toBe(200);
  });
});
