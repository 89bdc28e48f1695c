import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, newTenant, signIn, startStack, TcpProxy, type Stack } from "@gateway/testkit";

let stack: Stack;
let proxy: TcpProxy;
let filesProxy: TcpProxy;
let admin: string;

beforeAll(async () => {
  // The edge, and the files service, reach PostgreSQL through relays the test can cut.
  proxy = new TcpProxy("127.0.0.1", 5432);
  await proxy.start();
  filesProxy = new TcpProxy("127.0.0.1", 5432);
  await filesProxy.start();
  stack = await startStack({
    env: {
      edge: {
        DATABASE_URL: `postgresql://postgres@127.0.0.1:${proxy.port}/postgres`,
        GRPC_DEADLINE_MS: "800",
        BODY_LIMIT_BYTES: "2048",
      },
      files: { DATABASE_URL: `postgresql://postgres@127.0.0.1:${filesProxy.port}/postgres` },
    },
  });
  admin = await signIn(stack.edgeUrl, stack.admin.email, stack.admin.password);
});

afterAll(async () => {
  await stack?.shutdown();
  await proxy?.close();
  await filesProxy?.close();
});

async function credit(tenantId: string, units: number, key?: string) {
  return call(stack.edgeUrl, "POST", `/ops/ledger/tenants/${tenantId}/credits`, {
    token: admin,
    body: { units, reason: "foundation test" },
    ...(key ? { headers: { "Idempotency-Key": key } } : {}),
  });
}

async function auditRows(requestId: string) {
  return stack.sql<{ event_id: string; type: string; source: string; data: Record<string, unknown> }>(
    "jobs",
    "SELECT event_id, type, source, data FROM audit_events WHERE request_id = $1",
    [requestId],
  );
}

async function eventually<T>(fn: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 10_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (ok(v)) return v;
    if (Date.now() > until) throw new Error(`condition not met in ${timeoutMs} ms: ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("a request through the stack", () => {
  it("reaches the ledger over gRPC, writes PostgreSQL, and keeps one request id in HTTP, gRPC metadata, events and logs", async () => {
    const tenant = await newTenant(stack.edgeUrl, "flow");
    const res = await credit(tenant.tenantId, 12_345);
    expect(res.status).toBe(201);
    expect(res.body.data.available_units).toBe(12_345);
    const requestId = res.headers.get("x-request-id")!;
    expect(requestId).toMatch(/^req_[0-9A-Z]{26}$/);

    // PostgreSQL (the ledger's own database): one transfer, balanced entries.
    const transfers = await stack.sql("ledger", "SELECT id, units::text FROM transfers WHERE id = $1", [res.body.data.entry_id]);
    expect(transfers).toEqual([{ id: res.body.data.entry_id, units: "12345" }]);
    const legs = await stack.sql<{ sum: string }>("ledger", "SELECT sum(units)::text AS sum FROM entries WHERE transfer_id = $1", [res.body.data.entry_id]);
    expect(legs[0]!.sum).toBe("0");

    // Reading it back through another route and another RPC.
    const balance = await call(stack.edgeUrl, "GET", "/console/balance", { token: tenant.token });
    expect(balance.body).toEqual({ data: { currency: "USD", available_units: 12_345, reserved_units: 0 } });

    // The request id: edge access log, ledger's RPC log (from gRPC metadata),
    // the event's envelope (NATS) as stored by the audit consumer, and its log line.
    await stack.waitForLog("edge", (l) => l.request_id === requestId && l.msg === "request" && l.status === 201);
    await stack.waitForLog("ledger", (l) => l.request_id === requestId && l.rpc === "/gateway.ledger.v1.LedgerService/Credit");
    const rows = await eventually(
      () => auditRows(requestId),
      (r) => r.length > 0,
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ type: "ledger.credited", source: "ledger", data: { tenant_id: tenant.tenantId, units: "12345" } });
    await stack.waitForLog("jobs", (l) => l.request_id === requestId && l.msg === "event handled");
  });

  it("credits once for a repeated Idempotency-Key", async () => {
    const tenant = await newTenant(stack.edgeUrl, "idem");
    const first = await credit(tenant.tenantId, 700, "topup-1");
    const again = await credit(tenant.tenantId, 700, "topup-1");
    expect(again.status).toBe(201);
    expect(again.body.data.entry_id).toBe(first.body.data.entry_id);
    const other = await credit(tenant.tenantId, 999, "topup-1");
    expect(other.status).toBe(409);
    const balance = await call(stack.edgeUrl, "GET", `/ops/ledger/tenants/${tenant.tenantId}`, { token: admin });
    expect(balance.body.data).toMatchObject({ tenant_id: tenant.tenantId, available_units: 700 });
  });

  it("takes the longest Idempotency-Key the contract allows, and credits once for it", async () => {
    const tenant = await newTenant(stack.edgeUrl, "idem-long");
    const key = `k.${"x".repeat(121)}:_-12`;
    expect(key).toHaveLength(128);
    const first = await credit(tenant.tenantId, 300, key);
    expect(first.status).toBe(201);
    const again = await credit(tenant.tenantId, 300, key);
    expect(again.status).toBe(201);
    expect(again.body.data.entry_id).toBe(first.body.data.entry_id);
    expect((await credit(tenant.tenantId, 301, key)).status).toBe(409);
    const other = await credit(tenant.tenantId, 5, `${key.slice(0, 127)}y`);
    expect(other.status).toBe(201);
    const balance = await call(stack.edgeUrl, "GET", `/ops/ledger/tenants/${tenant.tenantId}`, { token: admin });
    expect(balance.body.data).toMatchObject({ available_units: 305 });
  });
});

describe("events through the outbox", () => {
  it("reach the durable consumer exactly once, also across a consumer crash and a duplicate delivery", async () => {
    const tenant = await newTenant(stack.edgeUrl, "events");
    const first = await credit(tenant.tenantId, 1);
    const firstId = first.headers.get("x-request-id")!;
    await eventually(
      () => auditRows(firstId),
      (r) => r.length === 1,
    );

    // The consumer crashes; events keep being committed and published meanwhile.
    await stack.stop("jobs", "SIGKILL");
    const whileDown = [await credit(tenant.tenantId, 2), await credit(tenant.tenantId, 3)].map((r) => r.headers.get("x-request-id")!);
    await stack.start("jobs");
    for (const id of whileDown) {
      const rows = await eventually(
        () => auditRows(id),
        (r) => r.length > 0,
      );
      expect(rows).toHaveLength(1);
    }

    // The first event arrives again (as after a relay crash between publish and delete).
    const [stored] = await auditRows(firstId);
    const envelope = {
      id: stored!.event_id,
      type: stored!.type,
      source: stored!.source,
      occurred_at: new Date().toISOString(),
      request_id: firstId,
      data: stored!.data,
    };
    const nc = await stack.nats();
    await nc
      .jetstream()
      .publish(`${stack.namespace}.events.ledger.credited`, new TextEncoder().encode(JSON.stringify(envelope)), { msgID: `replay-${stored!.event_id}` });
    await stack.waitForLog("jobs", (l) => l.event_id === stored!.event_id && l.outcome === "duplicate");
    expect(await auditRows(firstId)).toHaveLength(1);
    const total = await stack.sql<{ n: number }>(
      "jobs",
      "SELECT count(*)::int AS n FROM audit_events WHERE type = 'ledger.credited' AND data->>'tenant_id' = $1",
      [tenant.tenantId],
    );
    expect(total[0]!.n).toBe(3);
  });

  it("are only published for committed transactions", async () => {
    const tenant = await newTenant(stack.edgeUrl, "rollback");
    // A conflicting repeat rolls back inside the ledger: no second event.
    const ok = await credit(tenant.tenantId, 10, "k");
    const conflict = await credit(tenant.tenantId, 11, "k");
    expect(conflict.status).toBe(409);
    await eventually(
      () => auditRows(ok.headers.get("x-request-id")!),
      (r) => r.length === 1,
    );
    await new Promise((r) => setTimeout(r, 300));
    expect(await auditRows(conflict.headers.get("x-request-id")!)).toEqual([]);
    expect(await stack.sql("ledger", "SELECT 1 FROM outbox_events")).toEqual([]);
  });
});

describe("edge conventions", () => {
  it("generates X-Request-ID on every response and never adopts the client's", async () => {
    const seen = new Set<string>();
    for (const [method, path] of [
      ["GET", "/health"],
      ["GET", "/no/such/route"],
      ["POST", "/auth/login"],
      ["GET", "/console/balance"],
    ] as const) {
      const res = await call(stack.edgeUrl, method, path, { headers: { "X-Request-ID": "client-chosen" } });
      const id = res.headers.get("x-request-id");
      expect(id).toMatch(/^[A-Za-z0-9_-]{1,128}$/);
      expect(id).not.toBe("client-chosen");
      seen.add(id!);
    }
    expect(seen.size).toBe(4);
  });

  it("answers errors in the flat contract shape with the request id, without stack traces", async () => {
    const notFound = await call(stack.edgeUrl, "DELETE", "/v1/nothing/here");
    expect(notFound.status).toBe(404);
    expect(notFound.body).toEqual({ error: "not_found", message: expect.any(String), request_id: notFound.headers.get("x-request-id") });

    const badJson = await call(stack.edgeUrl, "POST", "/auth/register", { rawBody: '{"email": ', headers: { "content-type": "application/json" } });
    expect(badJson.status).toBe(400);
    expect(badJson.body.error).toBe("invalid_request");

    const tooBig = await call(stack.edgeUrl, "POST", "/auth/register", { body: { email: "a@b.co", password: "x".repeat(4096) } });
    expect(tooBig.status).toBe(413);
    expect(tooBig.body).toMatchObject({ error: "payload_too_large", request_id: tooBig.headers.get("x-request-id") });

    const unauth = await call(stack.edgeUrl, "GET", "/console/balance");
    expect(unauth.status).toBe(401);
    expect(unauth.body.error).toBe("unauthorized");

    const forbidden = await call(stack.edgeUrl, "GET", "/ops/ledger/tenants/ten_x", { token: (await newTenant(stack.edgeUrl, "nope")).token });
    expect(forbidden.status).toBe(403);
    expect(forbidden.body.error).toBe("forbidden");

    const unknownField = await call(stack.edgeUrl, "POST", "/ops/ledger/tenants/ten_x/credits", {
      token: admin,
      body: { units: 1, reason: "r", surprise: true },
    });
    expect(unknownField.status).toBe(400);

    for (const res of [notFound, badJson, tooBig, unauth, forbidden, unknownField]) {
      expect(JSON.stringify(res.body)).not.toMatch(/at \w+ \(|node_modules|\.ts:\d+/);
    }
  });

  it("publishes an OpenAPI 3.1 document generated from the validating schemas", async () => {
    const res = await call(stack.edgeUrl, "GET", "/openapi.json");
    expect(res.status).toBe(200);
    expect(res.body.openapi).toBe("3.1.0");
    expect(res.body.info.version).toBe("2026.09.22-managed-ai.1");
    const register = res.body.paths["/auth/register"].post;
    expect(register.requestBody.content["application/json"].schema.properties.password).toMatchObject({ minLength: 12, maxLength: 256 });
    expect(register.requestBody.content["application/json"].schema.additionalProperties).toBe(false);
    expect(res.body.paths["/ops/ledger/tenants/{tenant_id}/credits"].post.parameters[0]).toMatchObject({ name: "tenant_id", in: "path", required: true });
    for (const path of [
      "/health",
      "/openapi.json",
      "/metrics",
      "/auth/login",
      "/auth/refresh",
      "/auth/logout",
      "/console/balance",
      "/ops/users/{id}/platform-role",
    ]) {
      expect(res.body.paths[path], path).toBeDefined();
    }
  });

  it("serves Prometheus metrics on the edge and on every service", async () => {
    const edge = await fetch(stack.metricsUrl("edge"));
    expect(edge.status).toBe(200);
    expect(await edge.text()).toContain('http_request_duration_seconds_count{service="edge"');
    for (const service of ["ledger", "managed-ai", "jobs", "messaging", "files"] as const) {
      const res = await fetch(stack.metricsUrl(service));
      expect(res.status, service).toBe(200);
      expect(await res.text()).toContain(`process_cpu_user_seconds_total{service="${service}"}`);
    }
  });
});

describe("failure", () => {
  it("a service that is down yields 503 at once; a hung one yields 503 at the deadline", async () => {
    const tenant = await newTenant(stack.edgeUrl, "down");
    const ledger = stack.process("ledger");

    ledger.signal("SIGSTOP"); // alive but not answering
    let started = Date.now();
    const hung = await call(stack.edgeUrl, "GET", "/console/balance", { token: tenant.token });
    const hungMs = Date.now() - started;
    ledger.signal("SIGCONT");
    expect(hung.status).toBe(503);
    expect(hung.body).toMatchObject({ error: "unavailable", request_id: hung.headers.get("x-request-id") });
    expect(hungMs).toBeGreaterThanOrEqual(700);
    expect(hungMs).toBeLessThan(3_000);

    await stack.stop("ledger", "SIGKILL");
    started = Date.now();
    const down = await call(stack.edgeUrl, "GET", "/console/balance", { token: tenant.token });
    expect(down.status).toBe(503);
    expect(down.body.error).toBe("unavailable");
    expect(Date.now() - started).toBeLessThan(1_500);

    await stack.start("ledger");
    const back = await eventually(
      () => call(stack.edgeUrl, "GET", "/console/balance", { token: tenant.token }),
      (r) => r.status === 200,
    );
    expect(back.body.data.available_units).toBe(0);
  });

  it("health reports 503 degraded while the edge's database is unreachable, and recovers", async () => {
    proxy.block();
    const down = await call(stack.edgeUrl, "GET", "/health");
    expect(down.status).toBe(503);
    expect(down.body).toEqual({ status: "degraded", db: "error", ts: expect.stringMatching(/Z$/) });
    proxy.unblock();
    const up = await eventually(
      () => call(stack.edgeUrl, "GET", "/health"),
      (r) => r.status === 200,
    );
    expect(up.body).toMatchObject({ status: "ok", db: "ok" });
  });

  it("every gRPC service answers the manifests' probes on its metrics port; readiness turns 503 while its database is unreachable, and recovers", async () => {
    const probe = (service: "ledger" | "managed-ai" | "jobs" | "messaging" | "files", path: string) =>
      fetch(stack.metricsUrl(service).replace(/\/metrics$/, path)).then((r) => r.status);
    for (const service of ["ledger", "managed-ai", "jobs", "messaging", "files"] as const) {
      expect(await probe(service, "/health/live"), service).toBe(200);
      expect(await probe(service, "/health/ready"), service).toBe(200);
    }
    filesProxy.block();
    try {
      expect(
        await eventually(
          () => probe("files", "/health/ready"),
          (s) => s === 503,
        ),
      ).toBe(503);
      // Alive all the same: an outage takes a replica out of rotation without restarting it.
      expect(await probe("files", "/health/live")).toBe(200);
      expect(await probe("ledger", "/health/ready")).toBe(200);
    } finally {
      filesProxy.unblock();
    }
    expect(
      await eventually(
        () => probe("files", "/health/ready"),
        (s) => s === 200,
      ),
    ).toBe(200);
  });

  it("shuts the edge down gracefully: an in-flight request completes, then the process exits 0", async () => {
    const tenant = await newTenant(stack.edgeUrl, "drain");
    const ledger = stack.process("ledger");
    ledger.signal("SIGSTOP");
    const inFlight = call(stack.edgeUrl, "GET", "/console/balance", { token: tenant.token });
    await new Promise((r) => setTimeout(r, 150));
    const exited = stack.stop("edge", "SIGTERM");
    await new Promise((r) => setTimeout(r, 150));
    await expect(fetch(`${stack.edgeUrl}/health`)).rejects.toThrow();
    ledger.signal("SIGCONT");
    const res = await inFlight;
    expect(res.status).toBe(200);
    expect(await exited).toBe(0);
    expect(stack.logs("edge").some((l) => l.msg === "stopped" && l.code === 0)).toBe(true);
    await stack.start("edge");
  });
});
