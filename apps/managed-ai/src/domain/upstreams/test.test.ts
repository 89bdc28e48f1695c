import { createServer as createHttpServer } from "node:http";
import { createServer, type AddressInfo, type Server } from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startMockProvider, type MockProvider } from "@gateway/mock-provider";
import { parseKeyring } from "../../crypto/keyring.js";
import { createTestContext, KEY_1, type TestContext } from "../../testing/context.js";
import { putUpstream } from "./put.js";
import { testUpstream } from "./test.js";

const KEY = "sk-connection-test-13579";
const actor = "user:usr_op";
let t: TestContext;
let provider: MockProvider;
/** A TCP server that accepts connections and never answers. */
let silent: Server;

beforeAll(async () => {
  t = await createTestContext({ upstreamTestTimeoutMs: 400 });
  provider = await startMockProvider({ apiKey: KEY });
  silent = createServer(() => undefined);
  await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
});
afterAll(async () => {
  await provider?.close();
  silent?.close();
  await t?.close();
});
beforeEach(() => provider.reset());

async function upstream(id: string, baseUrl: string, apiKey?: string) {
  await putUpstream({ ctx: t.ctx, input: { id, provider: "openai", base_url: baseUrl, ...(apiKey ? { api_key: apiKey } : {}), actor } });
}

async function freeClosedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, "127.0.0.1", resolve));
  const { port } = s.address() as AddressInfo;
  await new Promise((resolve) => s.close(resolve));
  return port;
}

describe("testUpstream", () => {
  it("with the right key: reachable, authenticated, 200 from GET {base_url}/models with the Bearer key", async () => {
    await upstream("up_right", provider.url, KEY);
    expect(await testUpstream({ ctx: t.ctx, input: { id: "up_right", actor } })).toEqual({ reachable: true, authenticated: true, upstreamStatus: 200 });
    expect(provider.requests).toHaveLength(1);
    expect(provider.requests[0]).toMatchObject({ method: "GET", path: "/v1/models" });
    expect(provider.requests[0]!.headers.authorization).toBe(`Bearer ${KEY}`);
  });

  it("with a wrong key or none: reachable, not authenticated, the provider's status", async () => {
    await upstream("up_wrong", provider.url, "sk-not-the-key");
    expect(await testUpstream({ ctx: t.ctx, input: { id: "up_wrong", actor } })).toEqual({ reachable: true, authenticated: false, upstreamStatus: 401 });
    await upstream("up_nokey", provider.url);
    expect(await testUpstream({ ctx: t.ctx, input: { id: "up_nokey", actor } })).toEqual({ reachable: true, authenticated: false, upstreamStatus: 401 });
    expect(provider.requests.at(-1)!.headers.authorization).toBeUndefined();
  });

  it("with nothing listening, or a provider that never answers: unreachable within the timeout", async () => {
    await upstream("up_closed", `http://127.0.0.1:${await freeClosedPort()}/v1`, KEY);
    expect(await testUpstream({ ctx: t.ctx, input: { id: "up_closed", actor } })).toEqual({ reachable: false, authenticated: false, upstreamStatus: null });

    await upstream("up_silent", `http://127.0.0.1:${(silent.address() as AddressInfo).port}/v1`, KEY);
    let started = Date.now();
    expect(await testUpstream({ ctx: t.ctx, input: { id: "up_silent", actor } })).toEqual({ reachable: false, authenticated: false, upstreamStatus: null });
    expect(Date.now() - started).toBeGreaterThanOrEqual(350);
    expect(Date.now() - started).toBeLessThan(2_000);

    // A caller deadline shorter than the timeout wins.
    started = Date.now();
    await testUpstream({ ctx: t.ctx, input: { id: "up_silent", actor, deadline: new Date(Date.now() + 500) } });
    expect(Date.now() - started).toBeLessThan(400);
  });

  it("reports provider failures and redirects as answers that did not authenticate", async () => {
    await upstream("up_fail", provider.url, KEY);
    provider.set({ failStatus: 503 });
    expect(await testUpstream({ ctx: t.ctx, input: { id: "up_fail", actor } })).toEqual({ reachable: true, authenticated: false, upstreamStatus: 503 });

    // A redirect is not followed (the key would travel on): it is an answer, not a success.
    const redirect = createHttpServer((_req, res) => res.writeHead(302, { location: `${provider.url}/models` }).end());
    await new Promise<void>((resolve) => redirect.listen(0, "127.0.0.1", resolve));
    try {
      await upstream("up_redirect", `http://127.0.0.1:${(redirect.address() as AddressInfo).port}/v1`, KEY);
      provider.reset();
      expect(await testUpstream({ ctx: t.ctx, input: { id: "up_redirect", actor } })).toEqual({ reachable: true, authenticated: false, upstreamStatus: 302 });
      expect(provider.requests).toHaveLength(0);
    } finally {
      redirect.close();
    }
  });

  it("is 404 for an unknown upstream and 503 when the key cannot be decrypted", async () => {
    await expect(testUpstream({ ctx: t.ctx, input: { id: "up_none", actor } })).rejects.toMatchObject({ code: "not_found" });
    await upstream("up_lost", provider.url, KEY);
    const other = { ...t.ctx, keyring: parseKeyring(KEY_1) };
    await expect(testUpstream({ ctx: other, input: { id: "up_lost", actor } })).rejects.toMatchObject({ code: "unavailable" });
  });

  it("audits each test and never logs or emits the key", async () => {
    const tested = (await t.outbox()).filter((e) => e.type === "managed_ai.upstream_tested");
    expect(tested.map((e) => e.payload)).toContainEqual({ actor, upstream_id: "up_right", reachable: true, authenticated: true, upstream_status: 200 });
    expect(tested.map((e) => e.payload)).toContainEqual({ actor, upstream_id: "up_closed", reachable: false, authenticated: false, upstream_status: null });
    expect(JSON.stringify([await t.outbox(), t.logs])).not.toContain(KEY);
    expect(t.logs.some((l) => l.msg === "upstream test unreachable" && l.reason === "timeout")).toBe(true);
    expect(t.logs.some((l) => l.msg === "upstream test unreachable" && l.reason === "ECONNREFUSED")).toBe(true);
  });
});
