import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient, type Client } from "@gateway/grpc-kit";
import { jobsV1, ledgerV1, managedAiV1 } from "@gateway/protos";
import { call, makeCerts, newTenant, REPO_ROOT, signIn, startStack, testCerts, type Stack } from "@gateway/testkit";
import { eventually } from "./support/operators.js";

// Security: the doors between the gateway's processes (docs/decisions/0182, 0183, 0230).

let stack: Stack;
let managedAi: Client<typeof managedAiV1>;
let jobs: Client<typeof jobsV1>;

beforeAll(async () => {
  stack = await startStack({ services: ["ledger", "managed-ai", "jobs"] });
  managedAi = createClient(managedAiV1, stack.address("managed-ai"), {
    deadlineMs: 5_000,
    name: "managed-ai",
    serviceToken: stack.serviceToken,
    tls: stack.tls,
  });
  jobs = createClient(jobsV1, stack.address("jobs"), { deadlineMs: 5_000, name: "jobs", serviceToken: stack.serviceToken, tls: stack.tls });
});
afterAll(async () => {
  managedAi?.close();
  jobs?.close();
  await stack?.shutdown();
});

/** The gRPC status code under the AppError a kit client reports. */
async function statusOf(pending: Promise<unknown>): Promise<number | undefined> {
  const err = (await pending.then(
    () => undefined,
    (e: unknown) => e,
  )) as { cause?: { code?: number } } | undefined;
  return err?.cause?.code;
}

const UNAUTHENTICATED = 16;

describe("service-call authentication against a real service", () => {
  it("refuses calls without the service token or with a wrong one UNAUTHENTICATED, before any handler runs", async () => {
    const requestId = "req_unauthenticatedCall1";
    // Over the stack's TLS: the token is the second factor, checked after the certificate.
    const anonymous = createClient(ledgerV1, stack.address("ledger"), { deadlineMs: 5_000, tls: stack.tls });
    const stranger = createClient(ledgerV1, stack.address("ledger"), { deadlineMs: 5_000, serviceToken: randomBytes(32).toString("hex"), tls: stack.tls });
    const anonymousAi = createClient(managedAiV1, stack.address("managed-ai"), { deadlineMs: 5_000, tls: stack.tls });
    try {
      expect(await statusOf(anonymous.GetBalance({ tenant_id: "ten_any" }, { requestId }))).toBe(UNAUTHENTICATED);
      expect(await statusOf(stranger.GetBalance({ tenant_id: "ten_any" }, { requestId }))).toBe(UNAUTHENTICATED);
      expect(await statusOf(anonymousAi.RevealConnectedAccount({ tenant_id: "ten_any", id: "acct_any" }, { requestId }))).toBe(UNAUTHENTICATED);
      // The caller's error pipeline sees `unavailable` (its own clients get 503, not a 401 about them).
      await expect(stranger.GetBalance({ tenant_id: "ten_any" })).rejects.toMatchObject({ code: "unavailable" });
    } finally {
      for (const c of [anonymous, stranger, anonymousAi]) c.close();
    }
    await stack.waitForLog("ledger", (l) => l.msg === "rpc refused: missing or wrong service token");
    await stack.waitForLog("managed-ai", (l) => l.msg === "rpc refused: missing or wrong service token");
    // The handlers never ran: no call of this request id reached either service's pipeline.
    expect(stack.logs("ledger").some((l) => l.request_id === requestId)).toBe(false);
    expect(stack.logs("managed-ai").some((l) => l.request_id === requestId)).toBe(false);
    expect(JSON.stringify(stack.logs("ledger"))).not.toContain(stack.serviceToken);
    // With the stack's token the same call is answered.
    const member = createClient(ledgerV1, stack.address("ledger"), { deadlineMs: 5_000, serviceToken: stack.serviceToken, tls: stack.tls });
    try {
      expect(await member.GetBalance({ tenant_id: "ten_any" }, { requestId })).toBeDefined();
    } finally {
      member.close();
    }
  });

  it("speaks only mutual TLS: a plaintext client, or one whose certificate another CA signed, is refused before any handler runs", async () => {
    const requestId = "req_tlsRefusedCall1";
    const elsewhere = mkdtempSync(join(tmpdir(), "gw-other-ca-"));
    try {
      const other = makeCerts(elsewhere);
      // The right token, no TLS; the right token and a certificate of another CA (which it also trusts).
      const ledgers = [
        createClient(ledgerV1, stack.address("ledger"), { deadlineMs: 5_000, serviceToken: stack.serviceToken }),
        createClient(ledgerV1, stack.address("ledger"), { deadlineMs: 5_000, serviceToken: stack.serviceToken, tls: other.tls("edge") }),
      ];
      // The right token and our CA trusted, but a client certificate of another CA.
      const ai = createClient(managedAiV1, stack.address("managed-ai"), {
        deadlineMs: 5_000,
        serviceToken: stack.serviceToken,
        tls: { ...other.tls("edge"), ca: stack.tls!.ca },
      });
      try {
        for (const ledger of ledgers) await expect(ledger.GetBalance({ tenant_id: "ten_any" }, { requestId })).rejects.toMatchObject({ code: "unavailable" });
        await expect(ai.GetUsage({ id: "req_anyRequest1", tenant_id: "ten_any" }, { requestId })).rejects.toMatchObject({ code: "unavailable" });
      } finally {
        for (const c of [...ledgers, ai]) c.close();
      }
    } finally {
      rmSync(elsewhere, { recursive: true, force: true });
    }
    expect(stack.logs("ledger").some((l) => l.request_id === requestId)).toBe(false);
    expect(stack.logs("managed-ai").some((l) => l.request_id === requestId)).toBe(false);
    for (const service of ["ledger", "managed-ai", "jobs"] as const) {
      expect(stack.logs(service).find((l) => l.msg === "gRPC server listening")).toMatchObject({ tls: true });
    }
  });

  it("the edge, which carries the token, keeps working", async () => {
    const tenant = await newTenant(stack.edgeUrl, "auth");
    expect((await call(stack.edgeUrl, "GET", "/console/balance", { token: tenant.token })).status).toBe(200);
  });
});

describe("tenant-owned data needs the tenant", () => {
  it("ListUsage refuses an empty tenant id; every tenant's records only when asked for explicitly (the /ops view)", async () => {
    await expect(managedAi.ListUsage({ tenant_id: "", limit: 10 })).rejects.toMatchObject({ code: "invalid_request" });
    await expect(managedAi.ListUsage({ limit: 10 })).rejects.toMatchObject({ code: "invalid_request" });
    await expect(managedAi.ListUsage({ tenant_id: "ten_someone", all_tenants: true })).rejects.toMatchObject({ code: "invalid_request" });
    expect((await managedAi.ListUsage({ all_tenants: true, limit: 10 })).records).toBeInstanceOf(Array);
    expect((await managedAi.ListUsage({ tenant_id: "ten_someone", limit: 10 })).records).toEqual([]);
    await expect(managedAi.GetUsage({ id: "req_anyRequest1" })).rejects.toMatchObject({ code: "invalid_request" });
    await expect(managedAi.GetUsage({ id: "req_anyRequest1", tenant_id: "ten_someone" })).rejects.toMatchObject({ code: "not_found" });
    const admin = await signIn(stack.edgeUrl, stack.admin.email, stack.admin.password);
    expect((await call(stack.edgeUrl, "GET", "/ops/ai/requests", { token: admin })).status).toBe(200);
    const tenant = await newTenant(stack.edgeUrl, "usage");
    expect((await call(stack.edgeUrl, "GET", "/console/services/managed-ai/usage", { token: tenant.token })).status).toBe(200);
  });

  it("ListAuditEvents needs a tenant and lists only that tenant's events", async () => {
    await expect(jobs.ListAuditEvents({ type: "key.created", limit: 10 })).rejects.toMatchObject({ code: "invalid_request" });
    const a = await newTenant(stack.edgeUrl, "audit-a");
    const b = await newTenant(stack.edgeUrl, "audit-b");
    for (const t of [a, b]) {
      expect((await call(stack.edgeUrl, "POST", "/console/keys", { token: t.token, body: { name: "k", scopes: [] } })).status).toBe(201);
    }
    const ofA = await eventually(
      () => jobs.ListAuditEvents({ tenant_id: a.tenantId, type: "key.created", limit: 50 }),
      (res) => res.events.length > 0,
      10_000,
    );
    expect(ofA.events.map((e) => (JSON.parse(e.data_json) as { tenant_id: string }).tenant_id)).toEqual(ofA.events.map(() => a.tenantId));
    await eventually(
      () => jobs.ListAuditEvents({ tenant_id: b.tenantId, type: "key.created", limit: 50 }),
      (res) => res.events.length > 0,
      10_000,
    );
    const ofB = await jobs.ListAuditEvents({ tenant_id: b.tenantId, limit: 500 });
    expect(ofB.events.some((e) => e.data_json.includes(a.tenantId))).toBe(false);
  });

  it("RevealConnectedAccount needs the owning tenant: another tenant's id or none is refused", async () => {
    const owner = await newTenant(stack.edgeUrl, "reveal-a");
    const other = await newTenant(stack.edgeUrl, "reveal-b");
    const created = await call(stack.edgeUrl, "POST", "/console/connected-accounts", {
      token: owner.token,
      body: { provider: "telegram", name: "bot", secret: "123456:reveal-SECRET" },
    });
    expect(created.status).toBe(201);
    const id = created.body.data.id as string;
    await expect(managedAi.RevealConnectedAccount({ tenant_id: other.tenantId, id })).rejects.toMatchObject({ code: "not_found" });
    await expect(managedAi.RevealConnectedAccount({ tenant_id: "", id })).rejects.toMatchObject({ code: "invalid_request" });
    expect((await managedAi.RevealConnectedAccount({ tenant_id: owner.tenantId, id })).secret).toBe("123456:reveal-SECRET");
  });
});

describe("production refuses the placeholders the project ships", () => {
  const own = {
    PATH: process.env.PATH ?? "",
    NODE_ENV: "production",
    DATABASE_URL: "postgresql://gateway:an-own-password@127.0.0.1:1/postgres",
    SERVICE_TOKEN: randomBytes(32).toString("hex"),
    ENCRYPTION_KEYS: `k1:${randomBytes(32).toString("base64")}`,
    JWT_SECRET: randomBytes(32).toString("hex"),
    WIDGET_JWT_SECRET: randomBytes(32).toString("hex"),
    // Files that exist: these tests are about what each one names, not about TLS.
    ...testCerts().env("ledger"),
  };
  /** Starts a built service and returns how it ended (it must end at start-up, before any connection). */
  const start = (service: string, env: Record<string, string>) => {
    const run = spawnSync(process.execPath, [join(REPO_ROOT, "apps", service, "dist", "main.js")], { env, encoding: "utf8", timeout: 30_000 });
    return { status: run.status, stderr: run.stderr };
  };

  it.each([
    ["ledger", "SERVICE_TOKEN", "change-me-service-token-0123456789abcdef"],
    ["managed-ai", "ENCRYPTION_KEYS", "compose:Z94FChHbeVQ6pzIi874kNfxL8vIeVAWCYazZZhiYMfY="],
    ["messaging", "ENCRYPTION_KEYS", "compose-messaging:dKGyJh6JNudI0Ii+dFSU3RedBqAH9Vgw91KOTkdNnmI="],
    ["edge", "JWT_SECRET", "compose-local-jwt-secret-change-me-0123456789"],
    ["edge", "BOOTSTRAP_ADMIN_PASSWORD", "change-me-admin-password"],
    ["files", "DATABASE_URL", "postgresql://postgres:postgres@postgres:5432/postgres"],
    ["managed-ai", "ALLOW_PRIVATE_TARGETS", "true"],
    ["messaging", "ALLOW_PRIVATE_TARGETS", "true"],
  ])("%s exits at start-up naming %s when it is a shipped placeholder or a local-testing switch", (service, name, value) => {
    const extra: Record<string, string> = name === "BOOTSTRAP_ADMIN_PASSWORD" ? { BOOTSTRAP_ADMIN_EMAIL: "ops@example.com" } : {};
    const run = start(service, { ...own, ...extra, [name]: value });
    expect(run.status).not.toBe(0);
    expect(run.stderr).toContain("invalid configuration");
    expect(run.stderr).toMatch(new RegExp(`${name}: (is a placeholder|must be set in production|.*refused in production)`));
    if (value.length > 8) expect(run.stderr).not.toContain(value);
  });

  it.each(["ledger", "edge"])("%s refuses plaintext gRPC in production: it exits at start-up naming the TLS files it needs", (service) => {
    const { GRPC_TLS_CA: _ca, GRPC_TLS_CERT: _cert, GRPC_TLS_KEY: _key, ...plaintext } = own;
    const run = start(service, plaintext);
    expect(run.status).not.toBe(0);
    for (const name of ["GRPC_TLS_CA", "GRPC_TLS_CERT", "GRPC_TLS_KEY"]) {
      expect(run.stderr).toContain(`${name}: must be set in production: gRPC between the gateway's processes runs over mutual TLS`);
    }
  });

  it("a service left on its local defaults in production names every secret it needs", () => {
    const run = start("managed-ai", { PATH: own.PATH, NODE_ENV: "production" });
    expect(run.status).not.toBe(0);
    for (const name of ["SERVICE_TOKEN", "ENCRYPTION_KEYS", "DATABASE_URL", "GRPC_TLS_CA"]) expect(run.stderr).toContain(`${name}: `);
  });
});
