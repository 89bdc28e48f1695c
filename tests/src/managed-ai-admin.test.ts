import { createServer, type AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, newTenant, startStack, type Stack } from "@gateway/testkit";
import { startMockProvider, type MockProvider } from "@gateway/mock-provider";
import { auditOf, callers, type Callers } from "./support/operators.js";

// The operator side of managed AI through the edge: upstreams, models, prices,
// offers and the customer view, with their audit events (happy paths; see the
// .errors and .security files for the rest).

const PROVIDER_KEY = "sk-admin-happy-path-7a6b5c4d";
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

let stack: Stack;
let provider: MockProvider;
let who: Callers;
let op: string;

beforeAll(async () => {
  provider = await startMockProvider({ apiKey: PROVIDER_KEY });
  stack = await startStack({ env: { "managed-ai": { UPSTREAM_TEST_TIMEOUT_MS: "500" } } });
  who = await callers(stack);
  op = who.platformAdmin.token;
});

afterAll(async () => {
  await stack?.shutdown();
  await provider?.close();
});

const ops = (method: string, path: string, body?: unknown, token = op) => call(stack.edgeUrl, method, path, { token, ...(body === undefined ? {} : { body }) });
const requestIdOf = (res: { headers: Headers }) => res.headers.get("x-request-id")!;

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe("upstreams", () => {
  it("creates, updates and rotates an upstream; versions count the writes; the listing shows no credential", async () => {
    const created = await ops("PUT", "/ops/ai/upstreams/openai-main", { provider: "openai", base_url: `${provider.url}/`, api_key: PROVIDER_KEY });
    expect(created.status).toBe(200);
    expect(created.body).toEqual({ data: { id: "openai-main", version: 1, key_configured: true } });
    const audit = await auditOf(stack, requestIdOf(created));
    expect(audit).toMatchObject({
      type: "managed_ai.upstream_changed",
      source: "managed-ai",
      data: {
        actor: `user:${who.platformAdmin.userId}`,
        upstream_id: "openai-main",
        change: "created",
        key_rotated: true,
        before: null,
        after: { provider: "openai", base_url: provider.url, enabled: true, key_configured: true, version: 1 },
      },
    });

    const disabled = await ops("PUT", "/ops/ai/upstreams/openai-main", { provider: "openai", base_url: provider.url, enabled: false, version: 1 });
    expect(disabled.body.data).toEqual({ id: "openai-main", version: 2, key_configured: true });
    expect((await auditOf(stack, requestIdOf(disabled))).data).toMatchObject({
      change: "updated",
      key_rotated: false,
      before: { enabled: true, version: 1 },
      after: { enabled: false, key_configured: true, version: 2 },
    });

    const rotated = await ops("PUT", "/ops/ai/upstreams/openai-main", {
      provider: "openai",
      base_url: provider.url,
      api_key: PROVIDER_KEY,
      enabled: true,
      version: 2,
    });
    expect(rotated.body.data.version).toBe(3);
    expect((await auditOf(stack, requestIdOf(rotated))).data).toMatchObject({ key_rotated: true, after: { enabled: true, version: 3 } });

    const keyless = await ops("PUT", "/ops/ai/upstreams/keyless", { provider: "openai", base_url: "https://api.example.com/v1" });
    expect(keyless.body.data).toEqual({ id: "keyless", version: 1, key_configured: false });

    const list = await ops("GET", "/ops/ai/upstreams");
    expect(list.status).toBe(200);
    expect(list.body.data.map((u: { id: string }) => u.id)).toEqual(["keyless", "openai-main"]);
    expect(list.body.data[1]).toEqual({
      id: "openai-main",
      provider: "openai",
      base_url: provider.url,
      enabled: true,
      key_configured: true,
      version: 3,
      created_at: expect.stringMatching(ISO),
      updated_at: expect.stringMatching(ISO),
    });
  });

  it("tests the connection against the provider's models listing: right key, wrong key, nothing listening, no answer", async () => {
    provider.reset();
    const right = await ops("POST", "/ops/ai/upstreams/openai-main/test");
    expect(right.status).toBe(200);
    expect(right.body).toEqual({ data: { reachable: true, authenticated: true, upstream_status: 200 } });
    expect(provider.requests.map((r) => [r.method, r.path, r.headers.authorization])).toEqual([["GET", "/v1/models", `Bearer ${PROVIDER_KEY}`]]);
    expect((await auditOf(stack, requestIdOf(right))).data).toEqual({
      actor: `user:${who.platformAdmin.userId}`,
      upstream_id: "openai-main",
      reachable: true,
      authenticated: true,
      upstream_status: 200,
    });

    await ops("PUT", "/ops/ai/upstreams/wrong-key", { provider: "openai", base_url: provider.url, api_key: "sk-not-the-right-one" });
    const wrong = await ops("POST", "/ops/ai/upstreams/wrong-key/test");
    expect(wrong.body).toEqual({ data: { reachable: true, authenticated: false, upstream_status: 401 } });

    await ops("PUT", "/ops/ai/upstreams/nobody-home", { provider: "openai", base_url: `http://127.0.0.1:${await closedPort()}/v1`, api_key: PROVIDER_KEY });
    const refused = await ops("POST", "/ops/ai/upstreams/nobody-home/test");
    expect(refused.status).toBe(200);
    expect(refused.body).toEqual({ data: { reachable: false, authenticated: false, upstream_status: null } });

    provider.set({ delayMs: 5_000 });
    const started = Date.now();
    const silent = await ops("POST", "/ops/ai/upstreams/openai-main/test");
    const took = Date.now() - started;
    provider.set({ delayMs: undefined });
    expect(silent.status).toBe(200);
    expect(silent.body).toEqual({ data: { reachable: false, authenticated: false, upstream_status: null } });
    expect(took).toBeGreaterThanOrEqual(450);
    expect(took).toBeLessThan(2_500);
  });
});

describe("models and prices", () => {
  it("creates and updates a model by alias", async () => {
    const created = await ops("PUT", "/ops/ai/models/gpt-small", { upstream_id: "openai-main", upstream_model: "gpt-4o-mini" });
    expect(created.status).toBe(200);
    expect(created.body.data).toEqual({
      alias: "gpt-small",
      upstream_id: "openai-main",
      upstream_model: "gpt-4o-mini",
      enabled: true,
      max_output_tokens: 4096,
      max_tokens_per_image: null,
      version: 1,
      price: null,
      created_at: expect.stringMatching(ISO),
      updated_at: expect.stringMatching(ISO),
    });
    expect((await auditOf(stack, requestIdOf(created))).data).toMatchObject({
      model_alias: "gpt-small",
      change: "created",
      before: null,
      after: { version: 1 },
    });

    const updated = await ops("PUT", "/ops/ai/models/gpt-small", {
      upstream_id: "openai-main",
      upstream_model: "gpt-4o-mini-2024",
      max_output_tokens: 1024,
      version: 1,
    });
    expect(updated.body.data).toMatchObject({ upstream_model: "gpt-4o-mini-2024", max_output_tokens: 1024, enabled: true, version: 2 });
    expect((await auditOf(stack, requestIdOf(updated))).data).toMatchObject({
      actor: `user:${who.platformAdmin.userId}`,
      change: "updated",
      before: { upstream_model: "gpt-4o-mini", max_output_tokens: 4096, version: 1 },
      after: { upstream_model: "gpt-4o-mini-2024", max_output_tokens: 1024, version: 2 },
    });

    // The per-image limit (CONTRACT.md 5): set, kept when absent, cleared by null, never 0.
    const images = await ops("PUT", "/ops/ai/models/gpt-small", {
      upstream_id: "openai-main",
      upstream_model: "gpt-4o-mini-2024",
      max_tokens_per_image: 1_105,
      version: 2,
    });
    expect(images.body.data).toMatchObject({ max_tokens_per_image: 1_105, max_output_tokens: 1024, version: 3 });
    expect((await auditOf(stack, requestIdOf(images))).data).toMatchObject({
      before: { max_tokens_per_image: null, version: 2 },
      after: { max_tokens_per_image: 1_105, version: 3 },
    });
    const kept = await ops("PUT", "/ops/ai/models/gpt-small", { upstream_id: "openai-main", upstream_model: "gpt-4o-mini-2024", version: 3 });
    expect(kept.body.data).toMatchObject({ max_tokens_per_image: 1_105, version: 4 });
    for (const bad of [0, -1, 1.5, "85"]) {
      const refused = await ops("PUT", "/ops/ai/models/gpt-small", {
        upstream_id: "openai-main",
        upstream_model: "gpt-4o-mini-2024",
        max_tokens_per_image: bad,
      });
      expect(refused.status, String(bad)).toBe(400);
      expect(refused.body.error).toBe("invalid_request");
    }
    const cleared = await ops("PUT", "/ops/ai/models/gpt-small", {
      upstream_id: "openai-main",
      upstream_model: "gpt-4o-mini-2024",
      max_tokens_per_image: null,
      version: 4,
    });
    expect(cleared.body.data).toMatchObject({ max_tokens_per_image: null, version: 5 });
    expect((await ops("GET", "/ops/ai/models")).body.data.find((m: { alias: string }) => m.alias === "gpt-small")).toMatchObject({
      max_tokens_per_image: null,
      version: 5,
    });

    await ops("PUT", "/ops/ai/models/gpt-large", { upstream_id: "openai-main", upstream_model: "gpt-4o", enabled: false });
    const list = await ops("GET", "/ops/ai/models");
    expect(list.body.data.map((m: { alias: string; enabled: boolean }) => [m.alias, m.enabled])).toEqual([
      ["gpt-large", false],
      ["gpt-small", true],
    ]);
  });

  it("publishes immutable price versions 1, 2, 3 and lists them newest first", async () => {
    const first = await ops("POST", "/ops/ai/models/gpt-small/prices", { input_units_per_mtok: 1_500, output_units_per_mtok: 6_000 });
    expect(first.status).toBe(201);
    expect(first.body.data).toMatchObject({ alias: "gpt-small", version: 5 });
    expect(first.body.data.price).toEqual({
      id: expect.stringMatching(/^price_[0-9A-Z]{26}$/),
      model_alias: "gpt-small",
      version: 1,
      input_units_per_mtok: 1_500,
      output_units_per_mtok: 6_000,
      created_at: expect.stringMatching(ISO),
    });
    expect((await auditOf(stack, requestIdOf(first))).data).toEqual({
      actor: `user:${who.platformAdmin.userId}`,
      model_alias: "gpt-small",
      price: { price_id: first.body.data.price.id, version: 1, input_units_per_mtok: "1500", output_units_per_mtok: "6000" },
      previous: null,
    });
    const second = await ops("POST", "/ops/ai/models/gpt-small/prices", { input_units_per_mtok: 0, output_units_per_mtok: 9_007_199_254_740_991 });
    expect(second.body.data.price).toMatchObject({ version: 2, input_units_per_mtok: 0, output_units_per_mtok: 9_007_199_254_740_991 });
    const third = await ops("POST", "/ops/ai/models/gpt-small/prices", { input_units_per_mtok: 2_000, output_units_per_mtok: 8_000 });
    expect(third.body.data.price.version).toBe(3);
    expect((await auditOf(stack, requestIdOf(third))).data.previous).toMatchObject({ version: 2, output_units_per_mtok: "9007199254740991" });

    const prices = await ops("GET", "/ops/ai/models/gpt-small/prices");
    expect(prices.status).toBe(200);
    expect(prices.body.data.map((p: { version: number }) => p.version)).toEqual([3, 2, 1]);
    expect(prices.body.data[2]).toEqual(first.body.data.price);
    const models = await ops("GET", "/ops/ai/models");
    expect(models.body.data.find((m: { alias: string }) => m.alias === "gpt-small").price).toEqual(third.body.data.price);
    expect((await ops("GET", "/ops/ai/models/gpt-large/prices")).body).toEqual({ data: [] });
  });
});

describe("offers and the customer view", () => {
  it("keeps one offer per tenant and model, replaced in place, and lists them newest first", async () => {
    const tenant = who.tenant.tenantId;
    const created = await ops("PUT", "/ops/ai/discounts", { tenant_id: tenant, model_alias: "gpt-small", discount_bps: 1_000 });
    expect(created.status).toBe(200);
    expect(created.body.data).toEqual({ id: expect.stringMatching(/^offer_/), version: 1 });
    const replaced = await ops("PUT", "/ops/ai/discounts", {
      tenant_id: tenant,
      model_alias: "gpt-small",
      discount_bps: 2_500,
      expires_at: "2999-12-31T00:00:00Z",
      version: 1,
    });
    expect(replaced.body.data).toEqual({ id: created.body.data.id, version: 2 });
    expect((await auditOf(stack, requestIdOf(replaced))).data).toEqual({
      actor: `user:${who.platformAdmin.userId}`,
      offer_id: created.body.data.id,
      tenant_id: tenant,
      model_alias: "gpt-small",
      change: "updated",
      before: { discount_bps: 1_000, expires_at: null, version: 1 },
      after: { discount_bps: 2_500, expires_at: "2999-12-31T00:00:00.000Z", version: 2 },
    });

    const other = await newTenant(stack.edgeUrl, "other");
    await ops("PUT", "/ops/ai/discounts", { tenant_id: other.tenantId, model_alias: "gpt-small", discount_bps: 9_000, expires_at: "2001-01-01T00:00:00Z" });

    const list = await ops("GET", "/ops/ai/discounts");
    expect(list.body.data.map((o: { tenant_id: string }) => o.tenant_id)).toEqual([other.tenantId, tenant]);
    expect(list.body.data[1]).toEqual({
      id: created.body.data.id,
      tenant_id: tenant,
      model_alias: "gpt-small",
      discount_bps: 2_500,
      expires_at: "2999-12-31T00:00:00.000Z",
      version: 2,
      created_at: expect.stringMatching(ISO),
      updated_at: expect.stringMatching(ISO),
    });
    const filtered = await ops("GET", `/ops/ai/discounts?tenant_id=${tenant}&model_alias=gpt-small`);
    expect(filtered.body.data.map((o: { id: string }) => o.id)).toEqual([created.body.data.id]);
    expect((await ops("GET", "/ops/ai/discounts?model_alias=gpt-large")).body.data).toEqual([]);

    // null removes the expiry; an absent expires_at keeps it.
    const cleared = await ops("PUT", "/ops/ai/discounts", { tenant_id: tenant, model_alias: "gpt-small", discount_bps: 2_500, expires_at: null });
    expect(cleared.body.data.version).toBe(3);
    expect((await ops("GET", `/ops/ai/discounts?tenant_id=${tenant}`)).body.data[0].expires_at).toBeNull();
    const [expired] = (await ops("GET", `/ops/ai/discounts?tenant_id=${other.tenantId}`)).body.data;
    expect(expired.expires_at).toBe("2001-01-01T00:00:00.000Z");
  });

  it("shows each tenant its own effective prices: the list price version and its unexpired discount", async () => {
    const price = (await ops("GET", "/ops/ai/models/gpt-small/prices")).body.data[0];
    await ops("PUT", "/ops/ai/models/unpriced", { upstream_id: "openai-main", upstream_model: "x" });
    await ops("POST", "/ops/ai/models/gpt-large/prices", { input_units_per_mtok: 5, output_units_per_mtok: 7 });

    const mine = await call(stack.edgeUrl, "GET", "/console/services/managed-ai/models", { token: who.tenant.token });
    expect(mine.status).toBe(200);
    expect(mine.body).toEqual({
      data: [
        { alias: "gpt-large", enabled: false, price_id: expect.stringMatching(/^price_/), input_units_per_mtok: 5, output_units_per_mtok: 7, discount_bps: 0 },
        { alias: "gpt-small", enabled: true, price_id: price.id, input_units_per_mtok: 2_000, output_units_per_mtok: 8_000, discount_bps: 2_500 },
      ],
    });

    // The other tenant's offer expired: it counts as 0; a tenant without offers sees 0 too.
    const list = (await ops("GET", "/ops/ai/discounts")).body.data as { tenant_id: string; expires_at: string | null }[];
    const expiredTenant = list.find((o) => o.expires_at === "2001-01-01T00:00:00.000Z")!.tenant_id;
    expect(expiredTenant).not.toBe(who.tenant.tenantId);
    const stranger = await newTenant(stack.edgeUrl, "stranger");
    const theirs = await call(stack.edgeUrl, "GET", "/console/services/managed-ai/models", { token: stranger.token });
    expect(theirs.body.data.map((m: { discount_bps: number }) => m.discount_bps)).toEqual([0, 0]);
  });
});

describe("limits", () => {
  it("caps operator lists at 200 (prices at 100), newest first", async () => {
    const ms = (i: number) => `now() + interval '1 hour' + interval '${i} milliseconds'`;
    await stack.sql(
      "managed-ai",
      `INSERT INTO upstreams (id, provider, base_url, enabled, version, created_at, updated_at)
       SELECT 'bulk-' || i, 'openai', 'https://bulk.example/v1', true, 1, ${ms(0)} + i * interval '1 millisecond', now() FROM generate_series(1, 205) i`,
    );
    await stack.sql(
      "managed-ai",
      `INSERT INTO models (alias, upstream_id, upstream_model, enabled, max_output_tokens, version, created_at, updated_at)
       SELECT 'bulk-' || i, 'bulk-1', 'm', true, 4096, 1, ${ms(0)} + i * interval '1 millisecond', now() FROM generate_series(1, 205) i`,
    );
    await stack.sql(
      "managed-ai",
      `INSERT INTO price_versions (id, model_alias, version, input_units_per_mtok, output_units_per_mtok, created_by)
       SELECT 'price_bulk_' || i, 'bulk-1', i, i, i, 'user:test' FROM generate_series(1, 105) i`,
    );
    await stack.sql(
      "managed-ai",
      `INSERT INTO offers (id, tenant_id, model_alias, discount_bps, version, created_at, updated_at)
       SELECT 'offer_bulk_' || i, 'ten_bulk_' || i, 'bulk-1', 1, 1, ${ms(0)} + i * interval '1 millisecond', now() FROM generate_series(1, 205) i`,
    );
    const upstreams = (await ops("GET", "/ops/ai/upstreams")).body.data as { id: string }[];
    expect(upstreams).toHaveLength(200);
    expect(upstreams[0]!.id).toBe("bulk-205");
    expect(upstreams[199]!.id).toBe("bulk-6");
    const models = (await ops("GET", "/ops/ai/models")).body.data as { alias: string }[];
    expect([models.length, models[0]!.alias]).toEqual([200, "bulk-205"]);
    const offers = (await ops("GET", "/ops/ai/discounts")).body.data as { id: string }[];
    expect([offers.length, offers[0]!.id]).toEqual([200, "offer_bulk_205"]);
    const prices = (await ops("GET", "/ops/ai/models/bulk-1/prices")).body.data as { version: number }[];
    expect([prices.length, prices[0]!.version, prices[99]!.version]).toEqual([100, 105, 6]);
  });
});

describe("contract", () => {
  it("publishes every managed-ai route in the OpenAPI document", async () => {
    const doc = (await call(stack.edgeUrl, "GET", "/openapi.json")).body;
    for (const [path, method] of [
      ["/ops/ai/upstreams", "get"],
      ["/ops/ai/upstreams/{id}", "put"],
      ["/ops/ai/upstreams/{id}/test", "post"],
      ["/ops/ai/models", "get"],
      ["/ops/ai/models/{alias}", "put"],
      ["/ops/ai/models/{alias}/prices", "post"],
      ["/ops/ai/models/{alias}/prices", "get"],
      ["/ops/ai/discounts", "get"],
      ["/ops/ai/discounts", "put"],
      ["/console/services/managed-ai/models", "get"],
    ] as const) {
      expect(doc.paths[path]?.[method], `${method} ${path}`).toBeDefined();
    }
    const put = doc.paths["/ops/ai/upstreams/{id}"].put;
    expect(put.parameters[0].schema.pattern).toBe("^[A-Za-z0-9_-]{1,128}$");
    expect(put.requestBody.content["application/json"].schema.additionalProperties).toBe(false);
    expect(Object.keys(put.responses)).toEqual(expect.arrayContaining(["200", "400", "401", "403", "409", "500", "503"]));
  });
});
