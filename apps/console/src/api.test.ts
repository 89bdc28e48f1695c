import { describe, expect, it } from "vitest";
import { ApiClient, ApiError, REFRESH_MARGIN_MS, type Session, type SessionStore } from "./api.js";

function memoryStore(initial: Session | null = null): SessionStore & { value: Session | null } {
  const store = {
    value: initial,
    load: () => store.value,
    save: (s: Session | null) => {
      store.value = s;
    },
  };
  return store;
}

type Call = { url: string; auth: string | null; body: string | null };

/** A gateway double: /auth/refresh rotates the pair; other routes answer 401 to any token but `valid`. */
function gateway(options: { valid: () => string; refreshOk?: boolean; refreshStatus?: number }) {
  const calls: Call[] = [];
  let n = 0;
  const fetchImpl = (async (url: string, init: RequestInit) => {
    const headers = (init.headers ?? {}) as Record<string, string>;
    calls.push({ url, auth: headers.authorization ?? null, body: (init.body as string) ?? null });
    if (url.endsWith("/auth/refresh")) {
      if (options.refreshStatus)
        return new Response(JSON.stringify({ error: "rate_limited", message: "later", request_id: "r2" }), {
          status: options.refreshStatus,
          headers: { "retry-after": "5" },
        });
      if (options.refreshOk === false) return new Response(JSON.stringify({ error: "unauthorized", message: "used", request_id: "r1" }), { status: 401 });
      n += 1;
      return new Response(JSON.stringify({ token: `access-${n}`, refresh_token: `refresh-${n}`, expires_in: 900 }), { status: 200 });
    }
    if (headers.authorization !== `Bearer ${options.valid()}`)
      return new Response(JSON.stringify({ error: "unauthorized", message: "The session has expired.", request_id: "req_1" }), { status: 401 });
    return new Response(JSON.stringify({ data: { ok: true } }), { status: 200 });
  }) as unknown as typeof fetch;
  return { calls, fetchImpl };
}

describe("the console's API client", () => {
  it("refreshes before the access token expires, and keeps the rotated pair", async () => {
    let now = 1_000_000;
    const store = memoryStore({ token: "old", refresh_token: "refresh-0", expires_at: now + REFRESH_MARGIN_MS - 1 });
    const gw = gateway({ valid: () => "access-1" });
    const client = new ApiClient("http://gw", store, gw.fetchImpl, () => now);
    expect(await client.data("GET", "/console/balance")).toEqual({ ok: true });
    expect(gw.calls.map((c) => c.url)).toEqual(["http://gw/auth/refresh", "http://gw/console/balance"]);
    expect(JSON.parse(gw.calls[0]!.body!)).toEqual({ refresh_token: "refresh-0" });
    expect(store.value).toMatchObject({ token: "access-1", refresh_token: "refresh-1", expires_at: now + 900_000 });
    now += 1000;
    await client.data("GET", "/console/balance");
    expect(gw.calls.filter((c) => c.url.endsWith("/auth/refresh"))).toHaveLength(1);
  });

  it("on a 401 refreshes once and retries once", async () => {
    const store = memoryStore({ token: "revoked", refresh_token: "refresh-0", expires_at: Date.now() + 600_000 });
    const gw = gateway({ valid: () => "access-1" });
    const client = new ApiClient("http://gw", store, gw.fetchImpl);
    expect(await client.data("GET", "/console/keys")).toEqual({ ok: true });
    expect(gw.calls.map((c) => [c.url, c.auth])).toEqual([
      ["http://gw/console/keys", "Bearer revoked"],
      ["http://gw/auth/refresh", null],
      ["http://gw/console/keys", "Bearer access-1"],
    ]);
  });

  it("concurrent calls share one refresh (a refresh token works only once)", async () => {
    const store = memoryStore({ token: "old", refresh_token: "refresh-0", expires_at: Date.now() });
    const gw = gateway({ valid: () => "access-1" });
    const client = new ApiClient("http://gw", store, gw.fetchImpl);
    await Promise.all([client.data("GET", "/a"), client.data("GET", "/b"), client.data("GET", "/c")]);
    expect(gw.calls.filter((c) => c.url.endsWith("/auth/refresh"))).toHaveLength(1);
  });

  it("a refresh refused for now (429, 5xx) keeps the session: the access token still works until it expires", async () => {
    for (const status of [429, 503]) {
      const now = 1_000_000;
      const store = memoryStore({ token: "current", refresh_token: "refresh-0", expires_at: now + REFRESH_MARGIN_MS - 1 });
      const gw = gateway({ valid: () => "current", refreshStatus: status });
      const client = new ApiClient("http://gw", store, gw.fetchImpl, () => now);
      let signedOut = 0;
      client.onSignedOut = () => (signedOut += 1);
      expect(await client.data("GET", "/console/balance")).toEqual({ ok: true });
      expect(gw.calls.map((c) => [c.url, c.auth])).toEqual([
        ["http://gw/auth/refresh", null],
        ["http://gw/console/balance", "Bearer current"],
      ]);
      expect(store.value).toMatchObject({ token: "current", refresh_token: "refresh-0" });
      expect(signedOut).toBe(0);
    }
  });

  it("a refused refresh ends the session and surfaces the API's error", async () => {
    const store = memoryStore({ token: "revoked", refresh_token: "used", expires_at: Date.now() + 600_000 });
    const gw = gateway({ valid: () => "never", refreshOk: false });
    const client = new ApiClient("http://gw", store, gw.fetchImpl);
    let signedOut = 0;
    client.onSignedOut = () => (signedOut += 1);
    const err = await client.data("GET", "/console/keys").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(store.value).toBeNull();
    expect(client.signedIn).toBe(false);
    expect(signedOut).toBe(1);
    // No second retry: one call, one refresh.
    expect(gw.calls).toHaveLength(2);
  });

  it("reads the contract's error body as a sentence with the request id", async () => {
    const fetchImpl = (async () =>
      new Response(JSON.stringify({ error: "validation_failed", message: "scopes.0: Invalid option", request_id: "req_abc" }), {
        status: 422,
      })) as unknown as typeof fetch;
    const client = new ApiClient("", memoryStore(), fetchImpl);
    const err = (await client.data("POST", "/console/keys", { body: {}, auth: { kind: "none" } }).catch((e: unknown) => e)) as ApiError;
    expect(err.status).toBe(422);
    expect(err.code).toBe("validation_failed");
    expect(err.describe()).toBe("scopes.0: Invalid option (request req_abc)");
    expect(err.routeMissing).toBe(false);
  });

  it("tells a route this gateway lacks from a missing resource", async () => {
    const answer = (message: string) =>
      (async () => new Response(JSON.stringify({ error: "not_found", message, request_id: "r" }), { status: 404 })) as unknown as typeof fetch;
    const missing = (await new ApiClient("", memoryStore(), answer("No route for GET /v1/apps/file/list."))
      .data("GET", "/x", { auth: { kind: "none" } })
      .catch((e: unknown) => e)) as ApiError;
    expect(missing.routeMissing).toBe(true);
    expect(missing.describe()).toMatch(/not available on this gateway/i);
    const absent = (await new ApiClient("", memoryStore(), answer("No such request."))
      .data("GET", "/x", { auth: { kind: "none" } })
      .catch((e: unknown) => e)) as ApiError;
    expect(absent.routeMissing).toBe(false);
  });

  it("sends an API key as X-API-Key and never the session with it", async () => {
    const seen: Record<string, string>[] = [];
    const fetchImpl = (async (_url: string, init: RequestInit) => {
      seen.push(init.headers as Record<string, string>);
      return new Response(JSON.stringify({ data: [] }), { status: 200 });
    }) as unknown as typeof fetch;
    const client = new ApiClient("", memoryStore({ token: "t", refresh_token: "r", expires_at: Date.now() + 600_000 }), fetchImpl);
    await client.data("GET", "/v1/jobs", { auth: { kind: "apiKey", key: "gw_secret" } });
    expect(seen[0]).toEqual({ "x-api-key": "gw_secret" });
  });
});
