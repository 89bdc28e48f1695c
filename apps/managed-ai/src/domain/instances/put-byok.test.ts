import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startMockProvider, type MockProvider } from "@gateway/mock-provider";
import { isAppError } from "@gateway/errors";
import { ProviderClient } from "../../providers/openai.js";
import { createTestContext, type TestContext } from "../../testing/context.js";
import { invokeChat } from "../invocation/invoke.js";
import { invokeEmbeddings } from "../invocation/embed.js";
import { createConnectedAccount } from "../connected-accounts/create.js";
import { deleteConnectedAccount } from "../connected-accounts/delete.js";
import { revealConnectedAccount } from "../connected-accounts/reveal.js";
import { listInstances } from "./list.js";
import { putInstance } from "./put.js";

const KEY = "sk-unit-byok-key";
const actor = "user:u1";
let t: TestContext;
let provider: MockProvider;

const timeouts = { headersMs: 5_000, idleMs: 5_000 };
const permissive = () => new ProviderClient(timeouts, { allowPrivate: true });
const strict = () => new ProviderClient(timeouts, { allowPrivate: false });

beforeAll(async () => {
  provider = await startMockProvider({ apiKey: KEY });
  t = await createTestContext({ provider: permissive() });
});
afterAll(async () => {
  await t?.close();
  await provider?.close();
});

const byok = (alias: string, extra: Record<string, unknown> = {}) => ({
  actor,
  tenant_id: "ten_1",
  alias,
  status: "active" as const,
  mode: "byok" as const,
  provider: "openai",
  base_url: provider.url,
  default_model: "mock-small",
  api_key: KEY,
  ...extra,
});

async function failure(promise: Promise<unknown>) {
  try {
    await promise;
  } catch (err) {
    if (isAppError(err)) return { code: err.code, message: err.message };
    throw err;
  }
  throw new Error("expected a failure");
}

const chatBody = (body: Record<string, unknown>) => Buffer.from(JSON.stringify({ messages: [{ role: "user", content: "hi" }], ...body }));
const invokeInput = (alias: string, body: Buffer) => ({
  requestId: `req_${Math.random().toString(36).slice(2)}`,
  tenantId: "ten_1",
  apiKeyId: "key_1",
  alias,
  body,
  idempotencyKey: null,
  signal: new AbortController().signal,
});

describe("customer base URLs (SSRF)", () => {
  it("are refused at write when they resolve to private addresses, and nothing is stored", async () => {
    const guarded = await createTestContext({ provider: strict() });
    try {
      for (const base_url of [provider.url, "http://localhost:9/v1", "http://10.1.2.3/v1", "http://169.254.169.254/latest", "http://[::1]:8080/v1"]) {
        const refused = await failure(putInstance({ ctx: guarded.ctx, input: byok("bad", { base_url }) }));
        expect(refused.code, base_url).toBe("validation_failed");
        expect(refused.message).toContain("base_url");
      }
      expect(await listInstances({ ctx: guarded.ctx, input: { tenant_id: "ten_1" } })).toEqual([]);
    } finally {
      await guarded.close();
    }
  });

  it("are refused again at call time, before any request leaves (a stored URL that is no longer allowed)", async () => {
    await putInstance({ ctx: t.ctx, input: byok("local") });
    provider.reset();
    const before = await invokeChat({ ctx: t.ctx, input: invokeInput("local", chatBody({})) });
    expect(JSON.parse(before.body.toString()).choices[0].message.content).toBe("Mock reply to: hi");
    expect(provider.requests).toHaveLength(1);

    const strictClient = strict();
    const ctx = { ...t.ctx, provider: strictClient };
    try {
      for (const run of [
        () => invokeChat({ ctx, input: invokeInput("local", chatBody({})) }),
        () => invokeEmbeddings({ ctx, input: invokeInput("local", Buffer.from('{"input":"x"}')) }),
      ]) {
        const refused = await failure(run());
        expect(refused).toMatchObject({ code: "upstream_error" });
        expect(refused.message).toContain("not a public address");
      }
      // A name is resolved and checked too (and again by the socket's lookup when it connects).
      await expect(strictClient.models({ baseUrl: provider.url.replace("127.0.0.1", "localhost"), apiKey: KEY, egress: "customer" })).rejects.toMatchObject({
        code: "egress_refused",
      });
      // Operator upstreams are not customer egress.
      expect((await strictClient.models({ baseUrl: provider.url, apiKey: KEY, egress: "operator" })).object).toBe("list");
    } finally {
      await strictClient.close();
    }
    expect(provider.requests.filter((r) => r.path !== "/v1/models")).toHaveLength(1);
  });
});

describe("byok instances", () => {
  it("need exactly one credential, and store the key sealed, never in the config or the event", async () => {
    expect((await failure(putInstance({ ctx: t.ctx, input: byok("x", { api_key: undefined }) }))).code).toBe("invalid_request");
    expect((await failure(putInstance({ ctx: t.ctx, input: byok("x", { connected_account_id: "acct_1" }) }))).code).toBe("invalid_request");
    const view = await putInstance({ ctx: t.ctx, input: byok("sealed", { pricing: { input_units_per_mtok: "5", output_units_per_mtok: 7 } }) });
    expect(view).toMatchObject({
      mode: "byok",
      apiKeyConfigured: true,
      connectedAccountId: null,
      config: { base_url: provider.url, pricing: { input_units_per_mtok: "5", output_units_per_mtok: "7" } },
    });
    expect(JSON.stringify(view)).not.toContain(KEY);
    const row = await t.ctx.prisma.serviceInstance.findUniqueOrThrow({ where: { id: view.id } });
    expect(JSON.stringify(row.config)).not.toContain(KEY);
    expect(Buffer.from(row.apiKeyCiphertext!).includes(Buffer.from(KEY))).toBe(false);
    const events = await t.outbox();
    expect(events.find((e) => e.type === "managed_ai.byok_instance_changed" && e.payload.alias === "sealed")?.payload).toMatchObject({
      credential: "inline",
      change: "created",
    });
    expect(JSON.stringify(events)).not.toContain(KEY);
    // Switching the alias to managed forgets the key.
    await t.ctx.prisma.upstream.create({ data: { id: "up", provider: "openai", baseUrl: provider.url, enabled: true, version: 1 } });
    await t.ctx.prisma.model.create({ data: { alias: "m1", upstreamId: "up", upstreamModel: "mock-small" } });
    const managed = await putInstance({
      ctx: t.ctx,
      input: { actor, tenant_id: "ten_1", alias: "sealed", status: "active", mode: "managed", default_model: "m1" },
    });
    expect(managed).toMatchObject({ mode: "managed", apiKeyConfigured: false, version: 2 });
  });

  it("forward every provider parameter but the gateway's own, and estimate n choices", async () => {
    await putInstance({
      ctx: t.ctx,
      input: byok("params", { pricing: { input_units_per_mtok: "0", output_units_per_mtok: "1000000" }, max_tokens_per_request: 10 }),
    });
    provider.reset();
    const result = await invokeChat({
      ctx: t.ctx,
      input: invokeInput("params", chatBody({ model: "vendor/model-1.5", n: 3, logit_bias: { "1": 2 }, max_cost: 1, user: "u" })),
    });
    expect(provider.requests[0]!.body).toEqual({
      model: "vendor/model-1.5",
      messages: [{ role: "user", content: "hi" }],
      n: 3,
      logit_bias: { "1": 2 },
      user: "u",
      max_tokens: 10,
    });
    expect(result.reservedUnits).toBe(30n); // 10 tokens × 3 choices at 1 unit per token
    expect(result.priceId).toBe("");
  });
});

describe("connected accounts", () => {
  it("seal the secret, reveal it only to the owning tenant, and refuse deletion while an instance uses them", async () => {
    const account = await createConnectedAccount({ ctx: t.ctx, input: { actor, tenant_id: "ten_1", provider: "openai", name: "main", secret: KEY } });
    expect(account).toEqual({ id: expect.stringMatching(/^acct_/), tenantId: "ten_1", provider: "openai", name: "main", createdAt: expect.any(Date) });
    const row = await t.ctx.prisma.connectedAccount.findUniqueOrThrow({ where: { id: account.id } });
    expect(Buffer.from(row.secretCiphertext).includes(Buffer.from(KEY))).toBe(false);
    expect(row.secretKeyId).toBe("k2");
    expect(await revealConnectedAccount({ ctx: t.ctx, input: { tenant_id: "ten_1", id: account.id } })).toEqual({
      id: account.id,
      provider: "openai",
      secret: KEY,
    });
    expect((await failure(revealConnectedAccount({ ctx: t.ctx, input: { tenant_id: "ten_2", id: account.id } }))).code).toBe("not_found");

    await putInstance({ ctx: t.ctx, input: byok("via", { api_key: undefined, connected_account_id: account.id }) });
    provider.reset();
    await invokeChat({ ctx: t.ctx, input: invokeInput("via", chatBody({})) });
    expect(provider.requests[0]!.headers.authorization).toBe(`Bearer ${KEY}`);
    expect((await failure(deleteConnectedAccount({ ctx: t.ctx, input: { actor, tenant_id: "ten_1", id: account.id } }))).code).toBe("conflict");
    expect((await failure(deleteConnectedAccount({ ctx: t.ctx, input: { actor, tenant_id: "ten_2", id: account.id } }))).code).toBe("not_found");
    await putInstance({ ctx: t.ctx, input: byok("via") });
    await deleteConnectedAccount({ ctx: t.ctx, input: { actor, tenant_id: "ten_1", id: account.id } });
    expect((await failure(revealConnectedAccount({ ctx: t.ctx, input: { tenant_id: "ten_1", id: account.id } }))).code).toBe("not_found");
    const events = (await t.outbox()).filter((e) => e.type === "managed_ai.connected_account_changed");
    expect(events.map((e) => e.payload.change)).toEqual(["created", "deleted"]);
    expect(JSON.stringify(await t.outbox())).not.toContain(KEY);
    expect(JSON.stringify(t.logs)).not.toContain(KEY);
  });
});
