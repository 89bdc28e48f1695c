import { afterEach, describe, expect, it } from "vitest";
import { WidgetSession, type WidgetMessage } from "./session.js";

class MemoryStorage implements Storage {
  private readonly map = new Map<string, string>();
  get length() {
    return this.map.size;
  }
  clear() {
    this.map.clear();
  }
  getItem(key: string) {
    return this.map.get(key) ?? null;
  }
  key(i: number) {
    return [...this.map.keys()][i] ?? null;
  }
  removeItem(key: string) {
    this.map.delete(key);
  }
  setItem(key: string, value: string) {
    this.map.set(key, value);
  }
}

const GATEWAY = "https://gw.example";
const json = (status: number, body: unknown) => new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
const message = (id: string, author: "bot" | "visitor", text: string, at: string): WidgetMessage => ({
  id,
  author,
  kind: "text",
  text,
  deleted: false,
  created_at: at,
});

/** A gateway and a host page's session endpoint in one fetch: one-use refresh tokens, a feed, a chat. */
function fakeGateway() {
  const calls: string[] = [];
  const state = {
    issued: 0,
    live: new Set<string>(),
    used: new Set<string>(),
    token: "",
    messages: [message("msg_1", "visitor", "hello", "2026-01-01T00:00:01Z")],
    events: [] as { cursor: string; type: string; data: unknown }[],
    refuseTokens: false,
  };
  const grant = () => {
    state.issued += 1;
    const refresh = `rt_${state.issued}`;
    state.live.add(refresh);
    state.token = `tok_${state.issued}`;
    return { token: state.token, refresh_token: refresh, expires_in: 600, chat_id: "chat_1" };
  };
  const fetchImpl = async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    const url = new URL(String(input));
    const path = `${init?.method ?? "GET"} ${url.origin === GATEWAY ? "" : url.origin}${url.pathname}`;
    calls.push(path);
    if (path === "POST https://shop.example/session") return json(201, { data: grant() });
    if (path === "POST /v1/apps/bot/widget/refresh") {
      const { refresh_token } = JSON.parse(String(init?.body)) as { refresh_token: string };
      if (!state.live.has(refresh_token)) return json(401, { error: "unauthorized" });
      state.live.delete(refresh_token);
      state.used.add(refresh_token);
      return json(200, { data: grant() });
    }
    const auth = new Headers(init?.headers).get("authorization");
    if (state.refuseTokens || auth !== `Bearer ${state.token}`) return json(401, { error: "unauthorized" });
    if (path === "GET /v1/apps/bot/widget/events") {
      const cursor = Number(url.searchParams.get("cursor") ?? "0");
      const events = state.events.filter((e) => Number(e.cursor) > cursor);
      return json(200, { data: { events, next_cursor: events.length ? events[events.length - 1]!.cursor : String(cursor || "") } });
    }
    if (path === "GET /v1/apps/bot/widget/messages") return json(200, { data: state.messages });
    if (path === "POST /v1/apps/bot/widget/messages") {
      const m = message(`msg_${state.messages.length + 1}`, "visitor", (JSON.parse(String(init?.body)) as { text: string }).text, "2026-01-01T00:00:09Z");
      state.messages.push(m);
      return json(201, { data: m });
    }
    return json(404, { error: "not_found" });
  };
  return { calls, state, fetchImpl };
}

const sessions: WidgetSession[] = [];
afterEach(() => {
  for (const s of sessions.splice(0)) s.stop();
});

function widget(gw: ReturnType<typeof fakeGateway>, storage: { local: Storage; session: Storage }) {
  const seen: WidgetMessage[][] = [];
  const s = new WidgetSession({
    gateway: GATEWAY,
    sessionUrl: "https://shop.example/session",
    storage,
    fetchImpl: gw.fetchImpl,
    onMessages: (m) => seen.push(m),
  });
  sessions.push(s);
  return { s, seen };
}

describe("the widget's session", () => {
  it("opens a session through the page's server once, and a reload continues with the stored refresh token", async () => {
    const gw = fakeGateway();
    gw.state.events.push({ cursor: "1", type: "message.created", data: gw.state.messages[0] });
    const storage = { local: new MemoryStorage(), session: new MemoryStorage() };
    const first = widget(gw, storage);
    await first.s.start();
    expect(gw.calls.filter((c) => c.endsWith("/session"))).toHaveLength(1);
    expect(first.seen.at(-1)!.map((m) => m.text)).toEqual(["hello"]);
    const visitor = first.s.visitorId;
    expect(visitor).toMatch(/^v_[0-9a-f]{24}$/);
    // The refresh token lives in sessionStorage (this tab), never the access token.
    expect(JSON.parse(storage.session.getItem(`gw-widget:${GATEWAY}:session`)!)).toEqual({ refresh_token: "rt_1", cursor: "1" });
    first.s.stop();

    const reloaded = widget(gw, storage);
    await reloaded.s.start();
    expect(gw.calls.filter((c) => c.endsWith("/session"))).toHaveLength(1);
    expect(gw.state.used.has("rt_1")).toBe(true);
    expect(reloaded.s.visitorId).toBe(visitor);
    expect(reloaded.seen.at(-1)!.map((m) => m.text)).toEqual(["hello"]);
  });

  it("falls back to a new session from the page's server when the stored refresh token is refused", async () => {
    const gw = fakeGateway();
    const storage = { local: new MemoryStorage(), session: new MemoryStorage() };
    storage.session.setItem(`gw-widget:${GATEWAY}:session`, JSON.stringify({ refresh_token: "rt_stale", cursor: "" }));
    const { s } = widget(gw, storage);
    await s.start();
    expect(gw.calls.filter((c) => c.endsWith("/refresh"))).toHaveLength(1);
    expect(gw.calls.filter((c) => c.endsWith("/session"))).toHaveLength(1);
  });

  it("renews once when calls are refused at the same time (a refresh token works once), then retries them", async () => {
    const gw = fakeGateway();
    const { s, seen } = widget(gw, { local: new MemoryStorage(), session: new MemoryStorage() });
    await s.start();
    gw.state.token = "tok_rotated_elsewhere"; // the current token is no longer accepted
    const before = gw.calls.filter((c) => c.endsWith("/refresh")).length;
    await Promise.all([s.send("one"), s.send("two")]);
    expect(gw.calls.filter((c) => c.endsWith("/refresh")).length - before).toBe(1);
    expect(gw.state.used.size).toBe(1);
    expect(seen.at(-1)!.map((m) => m.text)).toEqual(["hello", "one", "two"]);
  });

  it("keeps trying to connect while the page's server is down", async () => {
    const gw = fakeGateway();
    const states: string[] = [];
    const down = async (input: RequestInfo | URL, init?: RequestInit) => (String(input).includes("shop.example") ? json(503, {}) : gw.fetchImpl(input, init));
    const s = new WidgetSession({
      gateway: GATEWAY,
      sessionUrl: "https://shop.example/session",
      storage: { local: new MemoryStorage(), session: new MemoryStorage() },
      fetchImpl: down,
      onMessages: () => undefined,
      onState: (st) => states.push(st),
    });
    sessions.push(s);
    await s.start();
    expect(states).toEqual(["connecting", "offline"]);
  });
});
