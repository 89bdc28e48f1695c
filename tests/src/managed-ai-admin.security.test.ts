import { randomBytes } from "node:crypto";
import type { Subscription } from "nats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, GRPC_SERVICES, newTenant, startStack, type Stack } from "@gateway/testkit";
import { startMockProvider, type MockProvider } from "@gateway/mock-provider";
import { auditEvents, callers, eventually, type Callers } from "./support/operators.js";

// Provider credentials never leave the service in clear (responses, logs,
// events), they are encrypted at rest; price versions are immutable in the
// database itself; concurrent writes of one version have exactly one winner.

const KEY_A = `sk-first-${randomBytes(12).toString("hex")}`;
const KEY_B = `sk-rotated-${randomBytes(12).toString("hex")}`;
const SECRETS = [KEY_A, KEY_B];
const ENCRYPTION_KEYS = `k2:${randomBytes(32).toString("base64")},k1:${randomBytes(32).toString("base64")}`;

let stack: Stack;
let provider: MockProvider;
let who: Callers;
let op: string;
let events: Subscription;
const published: string[] = [];
const responses: string[] = [];

beforeAll(async () => {
  provider = await startMockProvider({ apiKey: KEY_B });
  stack = await startStack({ env: { "managed-ai": { ENCRYPTION_KEYS } } });
  who = await callers(stack);
  op = who.platformAdmin.token;
  // Every event every service publishes, as it travels on NATS.
  events = (await stack.nats()).subscribe(`${stack.namespace}.events.>`);
  void (async () => {
    for await (const m of events) published.push(`${JSON.stringify(m.headers ? Object.fromEntries([...m.headers]) : {})} ${m.string()}`);
  })();
});

afterAll(async () => {
  events?.unsubscribe();
  await stack?.shutdown();
  await provider?.close();
});

/** Calls the edge and keeps every response (status, headers, body) for the secrecy check. */
async function ops(method: string, path: string, body?: unknown, token = op) {
  const res = await call(stack.edgeUrl, method, path, { token, ...(body === undefined ? {} : { body }) });
  responses.push(`${res.status} ${JSON.stringify(Object.fromEntries(res.headers))} ${typeof res.body === "string" ? res.body : JSON.stringify(res.body)}`);
  return res;
}

const upstream = (extra: Record<string, unknown> = {}) => ({ provider: "openai", base_url: provider.url, ...extra });

describe("provider credentials", () => {
  it("are used against the provider but appear in no response, log line, event or plaintext column", async () => {
    expect((await ops("PUT", "/ops/ai/upstreams/secret-up", upstream({ api_key: KEY_A }))).body.data).toEqual({
      id: "secret-up",
      version: 1,
      key_configured: true,
    });
    expect((await ops("GET", "/ops/ai/upstreams")).status).toBe(200);
    expect((await ops("POST", "/ops/ai/upstreams/secret-up/test")).body.data).toEqual({ reachable: true, authenticated: false, upstream_status: 401 });
    // Rotation.
    expect((await ops("PUT", "/ops/ai/upstreams/secret-up", upstream({ api_key: KEY_B, version: 1 }))).body.data.version).toBe(2);
    expect((await ops("POST", "/ops/ai/upstreams/secret-up/test")).body.data).toEqual({ reachable: true, authenticated: true, upstream_status: 200 });
    // Failures that carry a key in the request.
    expect((await ops("PUT", "/ops/ai/upstreams/secret-up", upstream({ api_key: KEY_A, version: 1 }))).status).toBe(409);
    expect((await ops("PUT", "/ops/ai/upstreams/secret-up", upstream({ api_key: KEY_A, extra: true }))).status).toBe(400);
    expect((await ops("PUT", "/ops/ai/upstreams/secret-up", upstream({ api_key: `${KEY_A} and more` }))).status).toBe(400);
    expect((await ops("PUT", "/ops/ai/upstreams/secret-up", { ...upstream({ api_key: KEY_A }), base_url: "ftp://x" })).status).toBe(400);
    expect((await ops("PUT", "/ops/ai/upstreams/secret-up", upstream({ api_key: KEY_A }), who.finance.token)).status).toBe(403);
    expect((await ops("PUT", "/ops/ai/upstreams/bad%20id", upstream({ api_key: KEY_A }))).status).toBe(400);
    expect((await ops("PUT", "/ops/ai/upstreams/secret-up", upstream({ api_key: KEY_B }), "")).status).toBe(401);

    // The provider did receive them: the checks below look where they could leak.
    expect(provider.requests.map((r) => r.headers.authorization)).toEqual([`Bearer ${KEY_A}`, `Bearer ${KEY_B}`]);

    // At rest: AES-256-GCM under the current key id, nonce || ciphertext || tag.
    const [row] = await stack.sql<{ key_id: string; length: number; leaks: boolean }>(
      "managed-ai",
      "SELECT api_key_key_id AS key_id, length(api_key_ciphertext) AS length, position(convert_to($1, 'UTF8') in api_key_ciphertext) > 0 AS leaks FROM upstreams WHERE id = 'secret-up'",
      [KEY_B],
    );
    expect(row).toEqual({ key_id: "k2", length: 12 + KEY_B.length + 16, leaks: false });

    // Events: the audit trail has them (so the check below is not vacuous) and NATS carried them.
    const changed = await eventually(
      () => auditEvents(stack, "managed_ai.upstream_changed"),
      (r) => r.length === 2,
    );
    expect(changed.map((e) => e.data.key_rotated)).toEqual([true, true]);
    const tested = await eventually(
      () => auditEvents(stack, "managed_ai.upstream_tested"),
      (r) => r.length === 2,
    );
    await eventually(
      async () => published.filter((p) => p.includes("managed_ai.upstream_")).length,
      (n) => n === 4,
    );
    const lastRequest = responses.length;
    expect(lastRequest).toBeGreaterThan(10);

    const stored = await stack.sql<{ all: string }>("jobs", "SELECT coalesce(string_agg(data::text, ' '), '') AS all FROM audit_events");
    const outbox = await stack.sql<{ all: string }>("managed-ai", "SELECT coalesce(string_agg(payload::text, ' '), '') AS all FROM outbox_events");
    const logs = Object.fromEntries(
      (["edge", ...GRPC_SERVICES] as const).map((s) => [
        s,
        stack
          .logs(s)
          .map((l) => JSON.stringify(l))
          .join("\n"),
      ]),
    );
    expect(logs["managed-ai"]).toContain("upstream test answered");
    expect(logs.edge).toContain("/ops/ai/upstreams/secret-up");
    for (const secret of SECRETS) {
      for (const [i, body] of responses.entries()) expect(body, `response ${i}`).not.toContain(secret);
      for (const [service, text] of Object.entries(logs)) expect(text, `${service} logs`).not.toContain(secret);
      expect(stored[0]!.all).not.toContain(secret);
      expect(outbox[0]!.all).not.toContain(secret);
      for (const message of published) expect(message).not.toContain(secret);
      for (const e of [...changed, ...tested]) expect(JSON.stringify(e)).not.toContain(secret);
    }
  });
});

describe("price versions", () => {
  it("cannot be changed or deleted by direct SQL", async () => {
    await ops("PUT", "/ops/ai/models/priced", { upstream_id: "secret-up", upstream_model: "gpt-x" });
    const published = await ops("POST", "/ops/ai/models/priced/prices", { input_units_per_mtok: 100, output_units_per_mtok: 200 });
    const id = published.body.data.price.id as string;
    await expect(stack.sql("managed-ai", "UPDATE price_versions SET input_units_per_mtok = 1 WHERE id = $1", [id])).rejects.toThrow(/immutable: UPDATE/);
    await expect(stack.sql("managed-ai", "DELETE FROM price_versions WHERE id = $1", [id])).rejects.toThrow(/immutable: DELETE/);
    await expect(stack.sql("managed-ai", "TRUNCATE price_versions CASCADE")).rejects.toThrow(/immutable: TRUNCATE/);
    expect(await stack.sql("managed-ai", "SELECT input_units_per_mtok::int AS input FROM price_versions WHERE id = $1", [id])).toEqual([{ input: 100 }]);
    expect((await ops("GET", "/ops/ai/models/priced/prices")).body.data).toEqual([published.body.data.price]);
  });

  it("published concurrently are numbered 1..n without gaps or duplicates", async () => {
    await ops("PUT", "/ops/ai/models/busy", { upstream_id: "secret-up", upstream_model: "gpt-x" });
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => ops("POST", "/ops/ai/models/busy/prices", { input_units_per_mtok: i, output_units_per_mtok: i })),
    );
    expect(results.map((r) => r.status)).toEqual(Array(10).fill(201));
    expect(results.map((r) => r.body.data.price.version).sort((a: number, b: number) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect((await ops("GET", "/ops/ai/models/busy/prices")).body.data.map((p: { version: number }) => p.version)).toEqual([10, 9, 8, 7, 6, 5, 4, 3, 2, 1]);
  });
});

describe("optimistic concurrency", () => {
  /** Fires writes at once; returns their statuses sorted. */
  async function race(writes: (() => Promise<{ status: number }>)[]): Promise<number[]> {
    return (await Promise.all(writes.map((w) => w()))).map((r) => r.status).sort();
  }

  it("of two concurrent writes with the same version, exactly one wins", async () => {
    await ops("PUT", "/ops/ai/upstreams/contended", upstream());
    expect(
      await race([
        () => ops("PUT", "/ops/ai/upstreams/contended", upstream({ enabled: false, version: 1 })),
        () => ops("PUT", "/ops/ai/upstreams/contended", upstream({ api_key: KEY_B, version: 1 })),
      ]),
    ).toEqual([200, 409]);
    expect(await stack.sql("managed-ai", "SELECT version FROM upstreams WHERE id = 'contended'")).toEqual([{ version: 2 }]);

    await ops("PUT", "/ops/ai/models/contended", { upstream_id: "contended", upstream_model: "a" });
    expect(
      await race([
        () => ops("PUT", "/ops/ai/models/contended", { upstream_id: "contended", upstream_model: "b", version: 1 }),
        () => ops("PUT", "/ops/ai/models/contended", { upstream_id: "contended", upstream_model: "c", version: 1 }),
      ]),
    ).toEqual([200, 409]);
    expect(await stack.sql("managed-ai", "SELECT version FROM models WHERE alias = 'contended'")).toEqual([{ version: 2 }]);

    const offer = { tenant_id: who.tenant.tenantId, model_alias: "contended" };
    await ops("PUT", "/ops/ai/discounts", { ...offer, discount_bps: 1 });
    expect(
      await race([
        () => ops("PUT", "/ops/ai/discounts", { ...offer, discount_bps: 2, version: 1 }),
        () => ops("PUT", "/ops/ai/discounts", { ...offer, discount_bps: 3, version: 1 }),
      ]),
    ).toEqual([200, 409]);
    expect(await stack.sql("managed-ai", "SELECT version FROM offers WHERE model_alias = 'contended'")).toEqual([{ version: 2 }]);

    // Two creations (version 0) of one id: one creates, the other is told it lost.
    expect(
      await race([
        () => ops("PUT", "/ops/ai/upstreams/born-twice", upstream({ version: 0 })),
        () => ops("PUT", "/ops/ai/upstreams/born-twice", upstream({ version: 0 })),
      ]),
    ).toEqual([200, 409]);
    // Exactly one audit event per winning write.
    const audited = await eventually(
      () => auditEvents(stack, "managed_ai.upstream_changed"),
      (r) => r.some((e) => e.data.upstream_id === "born-twice"),
    );
    await new Promise((r) => setTimeout(r, 300));
    expect((await auditEvents(stack, "managed_ai.upstream_changed")).filter((e) => e.data.upstream_id === "contended")).toHaveLength(2);
    expect(audited.filter((e) => e.data.upstream_id === "born-twice")).toHaveLength(1);
  });
});

describe("customer view", () => {
  it("is owner-scoped: each tenant sees its own discount only", async () => {
    const other = await newTenant(stack.edgeUrl, "neighbour");
    await ops("PUT", "/ops/ai/discounts", { tenant_id: other.tenantId, model_alias: "priced", discount_bps: 4_000 });
    const mine = await call(stack.edgeUrl, "GET", "/console/services/managed-ai/models", { token: who.tenant.token });
    const theirs = await call(stack.edgeUrl, "GET", "/console/services/managed-ai/models", { token: other.token });
    const discountOf = (res: { body: { data: { alias: string; discount_bps: number }[] } }, alias: string) =>
      res.body.data.find((m) => m.alias === alias)?.discount_bps;
    expect(discountOf(theirs, "priced")).toBe(4_000);
    expect(discountOf(mine, "priced")).toBe(0);
    expect(JSON.stringify(mine.body)).not.toContain(other.tenantId);
  });
});
