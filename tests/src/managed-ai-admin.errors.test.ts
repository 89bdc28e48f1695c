import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, startStack, type Stack } from "@gateway/testkit";
import { callers, eventually, type Callers } from "./support/operators.js";

// Every error of spec section 7 that applies to the managed-ai operator routes
// and the customer view: 400, 401, 403 (role by role), 404, 409, 503. (402, 429
// and 502 belong to invocation and API keys; a provider failure during a
// connection test is a result, not an error.)

let stack: Stack;
let who: Callers;
let op: string;

beforeAll(async () => {
  stack = await startStack();
  who = await callers(stack);
  op = who.platformAdmin.token;
  const setup = [
    await call(stack.edgeUrl, "PUT", "/ops/ai/upstreams/up-1", { token: op, body: { provider: "openai", base_url: "http://127.0.0.1:9/v1" } }),
    await call(stack.edgeUrl, "PUT", "/ops/ai/models/model-1", { token: op, body: { upstream_id: "up-1", upstream_model: "gpt-x" } }),
    await call(stack.edgeUrl, "PUT", "/ops/ai/discounts", { token: op, body: { tenant_id: who.tenant.tenantId, model_alias: "model-1", discount_bps: 100 } }),
  ];
  expect(setup.map((r) => r.status)).toEqual([200, 200, 200]);
});

afterAll(() => stack?.shutdown());

const req = (method: string, path: string, options: { token?: string; body?: unknown } = {}) => call(stack.edgeUrl, method, path, options);

/** Asserts the contract's flat error body. */
function expectError(res: { status: number; body: any; headers: Headers }, status: number, code: string, message?: RegExp) {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body).toMatchObject({ error: code, message: expect.any(String), request_id: res.headers.get("x-request-id") });
  if (message) expect(res.body.message).toMatch(message);
}

type Endpoint = { method: string; path: string; body?: unknown; write: boolean; ok: number };
const endpoints = (): Endpoint[] => [
  { method: "GET", path: "/ops/ai/upstreams", write: false, ok: 200 },
  { method: "PUT", path: "/ops/ai/upstreams/up-roles", body: { provider: "openai", base_url: "http://127.0.0.1:9/v1" }, write: true, ok: 200 },
  { method: "POST", path: "/ops/ai/upstreams/up-1/test", write: true, ok: 200 },
  { method: "GET", path: "/ops/ai/models", write: false, ok: 200 },
  { method: "PUT", path: "/ops/ai/models/model-roles", body: { upstream_id: "up-1", upstream_model: "gpt-x" }, write: true, ok: 200 },
  { method: "POST", path: "/ops/ai/models/model-1/prices", body: { input_units_per_mtok: 1, output_units_per_mtok: 2 }, write: true, ok: 201 },
  { method: "GET", path: "/ops/ai/models/model-1/prices", write: false, ok: 200 },
  { method: "GET", path: "/ops/ai/discounts", write: false, ok: 200 },
  { method: "PUT", path: "/ops/ai/discounts", body: { tenant_id: who.tenant.tenantId, model_alias: "model-1", discount_bps: 5 }, write: true, ok: 200 },
];

describe("roles", () => {
  it("no token: 401 on every route", async () => {
    for (const e of [...endpoints(), { method: "GET", path: "/console/services/managed-ai/models", write: false, ok: 200 }]) {
      expectError(await req(e.method, e.path, { ...(e.body ? { body: e.body } : {}) }), 401, "unauthorized");
      expectError(await req(e.method, e.path, { token: "not-a-token", ...(e.body ? { body: e.body } : {}) }), 401, "unauthorized");
    }
  });

  it("a tenant user (no platform role): 403 on every /ops route", async () => {
    for (const e of endpoints()) expectError(await req(e.method, e.path, { token: who.tenant.token, ...(e.body ? { body: e.body } : {}) }), 403, "forbidden");
  });

  it.each(["admin", "finance"] as const)("%s: reads, and 403 on every write without changing anything", async (role) => {
    const token = who[role].token;
    for (const e of endpoints()) {
      const res = await req(e.method, e.path, { token, ...(e.body ? { body: e.body } : {}) });
      if (e.write) expectError(res, 403, "forbidden", /platform_admin/);
      else expect(res.status, `${e.method} ${e.path}`).toBe(200);
    }
    expect(await stack.sql("managed-ai", "SELECT id FROM upstreams WHERE id = 'up-roles'")).toEqual([]);
    expect(await stack.sql("managed-ai", "SELECT alias FROM models WHERE alias = 'model-roles'")).toEqual([]);
    expect(await stack.sql("managed-ai", "SELECT id FROM price_versions")).toEqual([]);
  });

  it("platform_admin: reads and writes", async () => {
    for (const e of endpoints()) {
      const res = await req(e.method, e.path, { token: op, ...(e.body ? { body: e.body } : {}) });
      expect(res.status, `${e.method} ${e.path}: ${JSON.stringify(res.body)}`).toBe(e.ok);
    }
  });

  it("the customer view is for any tenant member, operators included (their own tenant)", async () => {
    for (const token of [who.tenant.token, who.finance.token, op]) {
      expect((await req("GET", "/console/services/managed-ai/models", { token })).status).toBe(200);
    }
  });
});

describe("400 invalid_request", () => {
  it("refuses path ids and aliases outside ^[A-Za-z0-9_-]{1,128}$", async () => {
    const long = "a".repeat(129);
    for (const [method, path, body] of [
      ["PUT", "/ops/ai/upstreams/bad%20id", { provider: "openai", base_url: "http://x.example" }],
      ["PUT", `/ops/ai/upstreams/${long}`, { provider: "openai", base_url: "http://x.example" }],
      ["POST", "/ops/ai/upstreams/up.1/test", undefined],
      ["PUT", "/ops/ai/models/a.b", { upstream_id: "up-1", upstream_model: "m" }],
      ["POST", `/ops/ai/models/${long}/prices`, { input_units_per_mtok: 1, output_units_per_mtok: 1 }],
      ["GET", "/ops/ai/models/%C3%A9/prices", undefined],
      ["GET", "/ops/ai/discounts?tenant_id=a%20b", undefined],
    ] as const) {
      expectError(await req(method, path, { token: op, ...(body ? { body } : {}) }), 400, "invalid_request");
    }
    expect(await stack.sql("managed-ai", "SELECT id FROM upstreams WHERE id LIKE 'bad%' OR length(id) > 128")).toEqual([]);
  });

  it("refuses unknown fields, missing bodies and invalid values on every write", async () => {
    const tenant = who.tenant.tenantId;
    const cases: [string, string, unknown, RegExp?][] = [
      ["PUT", "/ops/ai/upstreams/up-x", undefined, /JSON body is required/],
      ["PUT", "/ops/ai/upstreams/up-x", { provider: "openai", base_url: "http://x.example", surprise: 1 }, /surprise|unrecognized/i],
      ["PUT", "/ops/ai/upstreams/up-x", { provider: "anthropic", base_url: "http://x.example" }, /provider/],
      ["PUT", "/ops/ai/upstreams/up-x", { provider: "openai" }, /base_url/],
      ["PUT", "/ops/ai/upstreams/up-x", { provider: "openai", base_url: "ftp://x.example" }, /base_url/],
      ["PUT", "/ops/ai/upstreams/up-x", { provider: "openai", base_url: "https://me:pw@x.example/v1" }, /base_url/],
      ["PUT", "/ops/ai/upstreams/up-x", { provider: "openai", base_url: "http://x.example", api_key: "" }, /api_key/],
      ["PUT", "/ops/ai/upstreams/up-x", { provider: "openai", base_url: "http://x.example", enabled: "yes" }, /enabled/],
      ["PUT", "/ops/ai/upstreams/up-x", { provider: "openai", base_url: "http://x.example", version: -1 }, /version/],
      ["PUT", "/ops/ai/models/m-x", { upstream_id: "up-1" }, /upstream_model/],
      ["PUT", "/ops/ai/models/m-x", { upstream_id: "up-1", upstream_model: "m", max_output_tokens: 0 }, /max_output_tokens/],
      ["PUT", "/ops/ai/models/m-x", { upstream_id: "up 1", upstream_model: "m" }, /upstream_id/],
      ["PUT", "/ops/ai/models/m-x", { upstream_id: "up-1", upstream_model: "m", price: 1 }],
      ["POST", "/ops/ai/models/model-1/prices", { input_units_per_mtok: -1, output_units_per_mtok: 1 }, /input_units_per_mtok/],
      ["POST", "/ops/ai/models/model-1/prices", { input_units_per_mtok: 1.5, output_units_per_mtok: 1 }, /input_units_per_mtok/],
      ["POST", "/ops/ai/models/model-1/prices", { input_units_per_mtok: 1 }, /output_units_per_mtok/],
      ["POST", "/ops/ai/models/model-1/prices", { input_units_per_mtok: 1, output_units_per_mtok: 2 ** 53 }, /output_units_per_mtok/],
      ["POST", "/ops/ai/models/model-1/prices", { input_units_per_mtok: "1", output_units_per_mtok: 1 }, /input_units_per_mtok/],
      ["POST", "/ops/ai/models/model-1/prices", { input_units_per_mtok: 1, output_units_per_mtok: 1, version: 1 }],
      ["PUT", "/ops/ai/discounts", { tenant_id: tenant, model_alias: "model-1", discount_bps: 10_001 }, /discount_bps/],
      ["PUT", "/ops/ai/discounts", { tenant_id: tenant, model_alias: "model-1", discount_bps: -1 }, /discount_bps/],
      ["PUT", "/ops/ai/discounts", { tenant_id: tenant, model_alias: "model-1", discount_bps: 1, expires_at: "next week" }, /expires_at/],
      ["PUT", "/ops/ai/discounts", { tenant_id: tenant, model_alias: "model-1", discount_bps: 1, expires_at: "2030-01-01T00:00:00+02:00" }, /expires_at/],
      ["PUT", "/ops/ai/discounts", { tenant_id: tenant, discount_bps: 1 }, /model_alias/],
      ["PUT", "/ops/ai/discounts", { tenant_id: tenant, model_alias: "model-1", discount_bps: 1, id: "offer_x" }],
    ];
    for (const [method, path, body, message] of cases) {
      const res = await req(method, path, { token: op, ...(body === undefined ? {} : { body }) });
      expect(res.status, `${method} ${path} ${JSON.stringify(body)}`).toBe(400);
      expectError(res, 400, "invalid_request", message);
    }
    expect(await stack.sql("managed-ai", "SELECT id FROM upstreams WHERE id = 'up-x'")).toEqual([]);
    expect(await stack.sql("managed-ai", "SELECT alias FROM models WHERE alias = 'm-x'")).toEqual([]);
  });
});

describe("404 not_found", () => {
  it("for unknown upstreams, models and tenants, where the path or the body names them", async () => {
    expectError(await req("POST", "/ops/ai/upstreams/nope/test", { token: op }), 404, "not_found");
    expectError(await req("GET", "/ops/ai/models/nope/prices", { token: op }), 404, "not_found");
    expectError(await req("POST", "/ops/ai/models/nope/prices", { token: op, body: { input_units_per_mtok: 1, output_units_per_mtok: 1 } }), 404, "not_found");
    expectError(await req("PUT", "/ops/ai/models/m-new", { token: op, body: { upstream_id: "nope", upstream_model: "m" } }), 404, "not_found", /upstream_id/);
    expectError(
      await req("PUT", "/ops/ai/discounts", { token: op, body: { tenant_id: "ten_nope", model_alias: "model-1", discount_bps: 1 } }),
      404,
      "not_found",
      /tenant_id/,
    );
    expectError(
      await req("PUT", "/ops/ai/discounts", { token: op, body: { tenant_id: who.tenant.tenantId, model_alias: "nope", discount_bps: 1 } }),
      404,
      "not_found",
      /model_alias/,
    );
    expect(await stack.sql("managed-ai", "SELECT alias FROM models WHERE alias = 'm-new'")).toEqual([]);
  });
});

describe("409 conflict", () => {
  it("for a stale version on every versioned write, changing nothing", async () => {
    const up = await req("PUT", "/ops/ai/upstreams/up-v", { token: op, body: { provider: "openai", base_url: "http://127.0.0.1:9/v1" } });
    expect(up.body.data.version).toBe(1);
    expectError(
      await req("PUT", "/ops/ai/upstreams/up-v", { token: op, body: { provider: "openai", base_url: "http://changed.example/v1", version: 2 } }),
      409,
      "conflict",
      /version 1/,
    );
    expectError(
      await req("PUT", "/ops/ai/upstreams/up-v", { token: op, body: { provider: "openai", base_url: "http://changed.example/v1", version: 0 } }),
      409,
      "conflict",
    );
    expect(await stack.sql("managed-ai", "SELECT base_url, version FROM upstreams WHERE id = 'up-v'")).toEqual([
      { base_url: "http://127.0.0.1:9/v1", version: 1 },
    ]);

    const model = await req("PUT", "/ops/ai/models/model-v", { token: op, body: { upstream_id: "up-1", upstream_model: "a" } });
    await req("PUT", "/ops/ai/models/model-v", { token: op, body: { upstream_id: "up-1", upstream_model: "b", version: model.body.data.version } });
    expectError(await req("PUT", "/ops/ai/models/model-v", { token: op, body: { upstream_id: "up-1", upstream_model: "c", version: 1 } }), 409, "conflict");
    expect(await stack.sql("managed-ai", "SELECT upstream_model, version FROM models WHERE alias = 'model-v'")).toEqual([{ upstream_model: "b", version: 2 }]);

    const body = { tenant_id: who.tenant.tenantId, model_alias: "model-v", discount_bps: 10 };
    expect((await req("PUT", "/ops/ai/discounts", { token: op, body })).body.data.version).toBe(1);
    expectError(await req("PUT", "/ops/ai/discounts", { token: op, body: { ...body, discount_bps: 20, version: 7 } }), 409, "conflict");
    expect(await stack.sql("managed-ai", "SELECT discount_bps, version FROM offers WHERE model_alias = 'model-v'")).toEqual([{ discount_bps: 10, version: 1 }]);
  });

  it("for a version other than 0 when creating", async () => {
    expectError(
      await req("PUT", "/ops/ai/upstreams/up-new", { token: op, body: { provider: "openai", base_url: "http://x.example/v1", version: 1 } }),
      409,
      "conflict",
      /does not exist/,
    );
    expectError(await req("PUT", "/ops/ai/models/model-new", { token: op, body: { upstream_id: "up-1", upstream_model: "m", version: 3 } }), 409, "conflict");
    expectError(
      await req("PUT", "/ops/ai/discounts", { token: op, body: { tenant_id: who.tenant.tenantId, model_alias: "model-roles", discount_bps: 1, version: 1 } }),
      409,
      "conflict",
    );
    expect(
      (await req("PUT", "/ops/ai/upstreams/up-new", { token: op, body: { provider: "openai", base_url: "http://x.example/v1", version: 0 } })).body.data
        .version,
    ).toBe(1);
  });
});

describe("503 unavailable", () => {
  it("while managed-ai is down, at once; back when it is", async () => {
    await stack.stop("managed-ai", "SIGKILL");
    const started = Date.now();
    for (const [method, path] of [
      ["GET", "/ops/ai/models"],
      ["GET", "/ops/ai/upstreams"],
    ] as const) {
      expectError(await req(method, path, { token: op }), 503, "unavailable");
    }
    expectError(await req("GET", "/console/services/managed-ai/models", { token: who.tenant.token }), 503, "unavailable");
    expect(Date.now() - started).toBeLessThan(3_000);
    await stack.start("managed-ai");
    await eventually(
      () => req("GET", "/ops/ai/models", { token: op }),
      (r) => r.status === 200,
    );
  });
});
