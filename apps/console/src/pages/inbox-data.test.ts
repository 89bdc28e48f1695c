import { describe, expect, it } from "vitest";
import { ApiClient } from "../api.js";
import { FeedFollower, loadInbox } from "./inbox-data.js";

const session = { token: "t", refresh_token: "r", expires_at: Date.now() + 3_600_000 };
const store = { load: () => session, save: () => undefined };
const auth = { kind: "apiKey" as const, key: "gw_test" };
const ok = (data: unknown) => new Response(JSON.stringify({ data }), { status: 200 });

function client(routes: Record<string, () => Response>) {
  const seen: string[] = [];
  const fetchImpl = (async (url: string) => {
    seen.push(url);
    const route = routes[url];
    return route ? route() : new Response(JSON.stringify({ error: "not_found", message: `No route for ${url}` }), { status: 404 });
  }) as unknown as typeof fetch;
  return { api: new ApiClient("", store, fetchImpl), seen };
}

describe("the inbox's sources", () => {
  it("merges chats, SocialOps threads and conversations newest activity first; a chat that is a conversation's channel shows as the conversation", async () => {
    const { api } = client({
      "/console/services": () =>
        ok([
          { service_id: "socialops", alias: "support", status: "active" },
          { service_id: "ai-model", alias: "demo", status: "active" },
        ]),
      "/v1/apps/bot/chats?limit=100": () =>
        ok([
          {
            id: "chat_a",
            visitor_id: "v1",
            display_name: "Ada",
            conversation_id: null,
            last_message_at: "2026-01-01T00:00:03Z",
            created_at: "2026-01-01T00:00:00Z",
          },
          {
            id: "chat_b",
            visitor_id: "v2",
            display_name: null,
            conversation_id: "conv_1",
            last_message_at: "2026-01-01T00:00:05Z",
            created_at: "2026-01-01T00:00:00Z",
          },
        ]),
      "/v1/conversations/inbox?limit=100": () =>
        ok([
          {
            id: "conv_1",
            subject: null,
            status: "pending",
            version: 2,
            participants: [{ id: "p", kind: "visitor", external_id: "v2", display_name: "Bo", role: "member" }],
            channels: [{ id: "c", type: "bot_chat", ref: "chat_b" }],
            last_activity_at: "2026-01-01T00:00:05Z",
            created_at: "2026-01-01T00:00:00Z",
          },
        ]),
      "/v1/apps/socialops/support/inbox?limit=100": () =>
        ok([
          {
            id: "thr_1",
            provider: "generic",
            external_thread_id: "x",
            subject: "Parcel",
            unread_count: 2,
            message_count: 2,
            last_activity_at: "2026-01-01T00:00:04Z",
            created_at: "2026-01-01T00:00:00Z",
          },
        ]),
    });
    const inbox = await loadInbox(api, auth);
    expect(inbox.items.map((i) => [i.kind, i.title, i.source, i.state, i.unread])).toEqual([
      ["conversation", "Bo", "conversations", "pending", 0],
      ["thread", "Parcel", "socialops:support", "open", 2],
      ["chat", "Ada", "widget", "open", 0],
    ]);
    expect(inbox.sources).toEqual(["widget", "conversations", "socialops:support"]);
    expect(inbox.problems).toEqual([]);
  });

  it("names a source the key may not read and still lists the others", async () => {
    const { api } = client({
      "/console/services": () => ok([]),
      "/v1/apps/bot/chats?limit=100": () => ok([]),
      "/v1/conversations/inbox?limit=100": () =>
        new Response(JSON.stringify({ error: "forbidden", message: "missing scope conversation:read", request_id: "req_9" }), { status: 403 }),
    });
    const inbox = await loadInbox(api, auth);
    expect(inbox.problems.map((p) => p.source)).toEqual(["conversations"]);
    expect(inbox.items).toEqual([]);
  });

  it("finds the feed's head with a few probes, then returns what arrives after it", async () => {
    let head = 1234;
    const seen: string[] = [];
    const fetchImpl = (async (url: string) => {
      seen.push(url);
      const q = new URL(url, "http://x").searchParams;
      const after = Number(q.get("cursor") ?? "0");
      const limit = Number(q.get("limit"));
      const events = [];
      for (let n = after + 1; n <= Math.min(head, after + limit); n++)
        events.push({ id: `e${n}`, cursor: String(n), type: "message.created", chat_id: "c", conversation_id: null, data: {}, created_at: "" });
      return ok({ events, next_cursor: events.length ? events[events.length - 1]!.cursor : String(after) });
    }) as unknown as typeof fetch;
    const feed = new FeedFollower(new ApiClient("", store, fetchImpl), auth);
    expect(await feed.head()).toBe(1234);
    expect(seen.length).toBeLessThan(30);
    seen.length = 0;
    expect(await feed.next()).toEqual({ events: [], more: false });
    head = 1236;
    const next = await feed.next();
    expect(next.events.map((e) => e.cursor)).toEqual(["1235", "1236"]);
    expect(seen.at(-1)).toBe("/v1/apps/bot/widget/events?limit=100&cursor=1234");
    const empty = new FeedFollower(client({ "/v1/apps/bot/widget/events?limit=1": () => ok({ events: [], next_cursor: "" }) }).api, auth);
    expect(await empty.head()).toBe(0);
  });
});
