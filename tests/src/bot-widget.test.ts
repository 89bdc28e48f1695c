import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, newTenant, type Stack, startStack } from "@gateway/testkit";
import type { Tenant } from "./keys-helpers.js";
import { drain, hs256, keyWith, widgetSession, withApiKey, type FeedEvent } from "./widget-helpers.js";

let stack: Stack;
let owner: Tenant;
let other: Tenant;
let botKey: string;
let sessionKey: string;
let eventsKey: string;
let allKey: string;
let otherKey: string;
let edge2: string;

beforeAll(async () => {
  stack = await startStack({
    services: ["messaging"],
    // Revocations must reach other replicas by broadcast, not by the cache expiring.
    env: { edge: { WIDGET_SESSION_CACHE_TTL_MS: "300000", WIDGET_TOKEN_TTL_SECONDS: "900" } },
  });
  owner = await newTenant(stack.edgeUrl, "bot");
  other = await newTenant(stack.edgeUrl, "bot-other");
  [botKey, sessionKey, eventsKey, allKey, otherKey] = await Promise.all([
    keyWith(stack, owner, ["bot:send"]),
    keyWith(stack, owner, ["bot:session:create"]),
    keyWith(stack, owner, ["bot:events:read"]),
    keyWith(stack, owner, ["*"]),
    keyWith(stack, other, ["*"]),
  ]);
  edge2 = await stack.addEdge("edge-2", { WIDGET_SESSION_CACHE_TTL_MS: "300000" });
}, 180_000);
afterAll(async () => stack?.shutdown());

describe("bot", () => {
  it("creates a bot; a visitor's chat gets replies, file messages, edits, deletes and actions, in order", async () => {
    const bot = await call(stack.edgeUrl, "POST", "/v1/apps/bot", { ...withApiKey(botKey), body: { name: "Support", welcome_message: "Hi!" } });
    expect(bot.status).toBe(201);
    expect(bot.body.data).toEqual({ id: expect.stringMatching(/^bot_/), name: "Support", welcome_message: "Hi!", created_at: expect.stringMatching(/Z$/) });

    const w = await widgetSession(stack, sessionKey, "visitor-1", { display_name: "Ada", bot_id: bot.body.data.id });
    expect(w).toMatchObject({ chat_id: expect.stringMatching(/^chat_/), session_id: expect.stringMatching(/^wses_/), expires_in: 900, conversation_id: null });
    // A returning visitor gets the same chat.
    expect((await widgetSession(stack, sessionKey, "visitor-1")).chat_id).toBe(w.chat_id);

    const hello = await call(stack.edgeUrl, "POST", "/v1/apps/bot/widget/messages", { token: w.token, body: { text: "Hello?" } });
    expect(hello.status).toBe(201);
    expect(hello.body.data).toMatchObject({ chat_id: w.chat_id, author: "visitor", kind: "text", text: "Hello?", deleted: false });

    const reply = await call(stack.edgeUrl, "POST", "/v1/apps/bot/messages/reply", {
      ...withApiKey(botKey),
      body: { chat_id: w.chat_id, text: "How can I help?", reply_to_message_id: hello.body.data.id },
    });
    expect(reply.status).toBe(201);
    expect(reply.body.data).toMatchObject({ author: "bot", kind: "text", text: "How can I help?", reply_to_message_id: hello.body.data.id, edited_at: null });

    const file = await call(stack.edgeUrl, "POST", "/v1/apps/bot/messages/file", {
      ...withApiKey(botKey),
      body: { chat_id: w.chat_id, file_id: "file_01JD5Z0M3Q7W8X9Y0A1B2C3D4E", caption: "the manual" },
    });
    expect(file.status).toBe(201);
    expect(file.body.data).toMatchObject({ kind: "file", file_id: "file_01JD5Z0M3Q7W8X9Y0A1B2C3D4E", text: "the manual" });

    const edited = await call(stack.edgeUrl, "PATCH", `/v1/apps/bot/messages/${reply.body.data.id}`, {
      ...withApiKey(botKey),
      body: { text: "How may I help?" },
    });
    expect(edited.status).toBe(200);
    expect(edited.body.data).toMatchObject({ text: "How may I help?", edited_at: expect.stringMatching(/Z$/) });

    expect((await call(stack.edgeUrl, "DELETE", `/v1/apps/bot/messages/${file.body.data.id}`, withApiKey(botKey))).status).toBe(204);
    expect((await call(stack.edgeUrl, "DELETE", `/v1/apps/bot/messages/${file.body.data.id}`, withApiKey(botKey))).status).toBe(204);

    const action = await call(stack.edgeUrl, "POST", `/v1/apps/bot/chats/${w.chat_id}/actions`, { ...withApiKey(botKey), body: { action: "typing" } });
    expect(action.status).toBe(202);
    expect(action.body.data).toMatchObject({ chat_id: w.chat_id, action: "typing", event_id: expect.stringMatching(/^fev_/) });

    const history = await call(stack.edgeUrl, "GET", `/v1/apps/bot/chats/${w.chat_id}/messages`, withApiKey(botKey));
    expect(history.status).toBe(200);
    expect(history.body.data.map((m: { id: string }) => m.id)).toEqual([hello.body.data.id, reply.body.data.id, file.body.data.id]);
    expect(history.body.data[2]).toMatchObject({ deleted: true, text: null, file_id: null });
    const after = await call(stack.edgeUrl, "GET", `/v1/apps/bot/chats/${w.chat_id}/messages?after=${hello.body.data.id}&limit=1`, withApiKey(botKey));
    expect(after.body.data.map((m: { id: string }) => m.id)).toEqual([reply.body.data.id]);
    // The visitor sees the same history.
    const mine = await call(stack.edgeUrl, "GET", "/v1/apps/bot/widget/messages", { token: w.token });
    expect(mine.body.data.map((m: { id: string }) => m.id)).toEqual(history.body.data.map((m: { id: string }) => m.id));

    const chats = await call(stack.edgeUrl, "GET", "/v1/apps/bot/chats", withApiKey(botKey));
    expect(chats.body.data.find((c: { id: string }) => c.id === w.chat_id)).toMatchObject({
      visitor_id: "visitor-1",
      display_name: "Ada",
      bot_id: bot.body.data.id,
    });

    // The widget feed tells the story of the chat, in order.
    const { events } = await drain(stack.edgeUrl, "/v1/apps/bot/widget/events", { token: w.token });
    expect(events.map((e) => e.type)).toEqual([
      "chat.created",
      "session.created",
      "session.created",
      "message.created",
      "message.created",
      "message.created",
      "message.updated",
      "message.deleted",
      "chat.action",
    ]);
    expect(events[3]!.data).toMatchObject({ id: hello.body.data.id, text: "Hello?" });
  });

  it("answers bad input, unknown records and missing permissions with the contract's errors", async () => {
    const w = await widgetSession(stack, sessionKey, "visitor-errors");
    const cases: [string, string, unknown, number][] = [
      ["POST", "/v1/apps/bot", {}, 400],
      ["POST", "/v1/apps/bot", { name: "x", extra: 1 }, 400],
      ["POST", "/v1/apps/bot/messages/reply", { chat_id: w.chat_id, text: "" }, 400],
      ["POST", "/v1/apps/bot/messages/reply", { chat_id: w.chat_id, text: "x".repeat(4097) }, 400],
      ["POST", "/v1/apps/bot/messages/reply", { chat_id: "chat_nope", text: "hi" }, 404],
      ["POST", "/v1/apps/bot/messages/reply", { chat_id: w.chat_id, text: "hi", reply_to_message_id: "msg_nope" }, 404],
      ["POST", "/v1/apps/bot/messages/file", { chat_id: w.chat_id, file_id: "not-a-file" }, 400],
      ["PATCH", "/v1/apps/bot/messages/msg_nope", { text: "x" }, 404],
      ["DELETE", "/v1/apps/bot/messages/msg_nope", undefined, 404],
      ["POST", `/v1/apps/bot/chats/${w.chat_id}/actions`, { action: "dance" }, 400],
      ["GET", "/v1/apps/bot/chats/chat_nope/messages", undefined, 404],
      ["GET", "/v1/apps/bot/chats?limit=0", undefined, 400],
    ];
    for (const [method, path, body, status] of cases) {
      const res = await call(stack.edgeUrl, method, path, { ...withApiKey(botKey), ...(body === undefined ? {} : { body }) });
      expect(res.status, `${method} ${path}`).toBe(status);
      expect(res.body).toMatchObject({ error: expect.any(String), message: expect.any(String), request_id: res.headers.get("x-request-id") });
    }
    // A visitor's message cannot be edited by the bot; a deleted one not at all.
    const visitorMsg = await call(stack.edgeUrl, "POST", "/v1/apps/bot/widget/messages", { token: w.token, body: { text: "mine" } });
    expect(
      (await call(stack.edgeUrl, "PATCH", `/v1/apps/bot/messages/${visitorMsg.body.data.id}`, { ...withApiKey(botKey), body: { text: "x" } })).status,
    ).toBe(409);
    const botMsg = await call(stack.edgeUrl, "POST", "/v1/apps/bot/messages/reply", { ...withApiKey(botKey), body: { chat_id: w.chat_id, text: "bye" } });
    await call(stack.edgeUrl, "DELETE", `/v1/apps/bot/messages/${botMsg.body.data.id}`, withApiKey(botKey));
    expect((await call(stack.edgeUrl, "PATCH", `/v1/apps/bot/messages/${botMsg.body.data.id}`, { ...withApiKey(botKey), body: { text: "x" } })).status).toBe(
      409,
    );
    // Widget message without content.
    expect((await call(stack.edgeUrl, "POST", "/v1/apps/bot/widget/messages", { token: w.token, body: {} })).status).toBe(400);

    // Scopes: no key 401; a key without the route's scope 403.
    expect((await call(stack.edgeUrl, "POST", "/v1/apps/bot", { body: { name: "x" } })).status).toBe(401);
    expect((await call(stack.edgeUrl, "POST", "/v1/apps/bot", { ...withApiKey(sessionKey), body: { name: "x" } })).status).toBe(403);
    expect((await call(stack.edgeUrl, "POST", "/v1/apps/bot/widget/auth", { ...withApiKey(botKey), body: { visitor_id: "v" } })).status).toBe(403);
    expect((await call(stack.edgeUrl, "GET", "/v1/apps/bot/widget/events", withApiKey(botKey))).status).toBe(403);
    expect((await call(stack.edgeUrl, "POST", "/v1/apps/bot/widget/auth", { ...withApiKey(sessionKey), body: { visitor_id: "has space" } })).status).toBe(400);
    expect(
      (await call(stack.edgeUrl, "POST", "/v1/apps/bot/widget/auth", { ...withApiKey(sessionKey), body: { visitor_id: "v", bot_id: "bot_nope" } })).status,
    ).toBe(404);
  });

  it("keeps tenants apart: another tenant's chats, messages and events do not exist for it", async () => {
    const w = await widgetSession(stack, sessionKey, "visitor-tenancy");
    const msg = await call(stack.edgeUrl, "POST", "/v1/apps/bot/widget/messages", { token: w.token, body: { text: "private" } });
    expect((await call(stack.edgeUrl, "GET", `/v1/apps/bot/chats/${w.chat_id}/messages`, withApiKey(otherKey))).status).toBe(404);
    expect(
      (await call(stack.edgeUrl, "POST", "/v1/apps/bot/messages/reply", { ...withApiKey(otherKey), body: { chat_id: w.chat_id, text: "hi" } })).status,
    ).toBe(404);
    expect((await call(stack.edgeUrl, "PATCH", `/v1/apps/bot/messages/${msg.body.data.id}`, { ...withApiKey(otherKey), body: { text: "x" } })).status).toBe(
      404,
    );
    expect((await call(stack.edgeUrl, "DELETE", `/v1/apps/bot/messages/${msg.body.data.id}`, withApiKey(otherKey))).status).toBe(404);
    expect((await call(stack.edgeUrl, "POST", `/v1/apps/bot/chats/${w.chat_id}/actions`, { ...withApiKey(otherKey), body: { action: "end" } })).status).toBe(
      404,
    );
    const chats = await call(stack.edgeUrl, "GET", "/v1/apps/bot/chats", withApiKey(otherKey));
    expect(chats.body.data.map((c: { id: string }) => c.id)).not.toContain(w.chat_id);
    const { events } = await drain(stack.edgeUrl, "/v1/apps/bot/widget/events", withApiKey(otherKey));
    expect(events.some((e) => e.chat_id === w.chat_id)).toBe(false);
    // The same visitor id in another tenant is another chat.
    const theirs = await widgetSession(stack, otherKey, "visitor-tenancy");
    expect(theirs.chat_id).not.toBe(w.chat_id);
    expect((await call(stack.edgeUrl, "GET", "/v1/apps/bot/widget/messages", { token: theirs.token })).body.data).toEqual([]);
  });
});

describe("widget tokens", () => {
  it("open widget routes only; customer credentials do not open widget-only routes", async () => {
    const w = await widgetSession(stack, sessionKey, "visitor-isolation");
    const customerRoutes: [string, string][] = [
      ["GET", "/v1/apps/bot/chats"],
      ["POST", "/v1/apps/bot"],
      ["POST", "/v1/apps/bot/widget/auth"],
      ["GET", "/v1/conversations/inbox"],
      ["POST", "/v1/conversations"],
      ["GET", "/v1/jobs"],
      ["GET", "/v1/key"],
      ["GET", "/console/keys"],
      ["GET", "/console/balance"],
      ["GET", "/console/me"],
      ["GET", "/ops/ai/models"],
      ["GET", "/ops/ai/upstreams"],
      ["POST", "/auth/logout"],
    ];
    for (const [method, path] of customerRoutes) {
      const res = await call(stack.edgeUrl, method, path, { token: w.token, ...(method === "POST" ? { body: {} } : {}) });
      expect(res.status, `${method} ${path}`).toBe(401);
    }
    const widgetOnly: [string, string, unknown][] = [
      ["POST", "/v1/apps/bot/widget/revoke", undefined],
      ["POST", "/v1/apps/bot/widget/token", undefined],
      ["GET", "/v1/apps/bot/widget/messages", undefined],
      ["POST", "/v1/apps/bot/widget/messages", { text: "hi" }],
    ];
    for (const [method, path, body] of widgetOnly) {
      for (const creds of [withApiKey(allKey), { token: allKey }, { token: owner.token }, {}]) {
        const res = await call(stack.edgeUrl, method, path, { ...creds, ...(body === undefined ? {} : { body }) });
        expect(res.status, `${method} ${path} with ${JSON.stringify(Object.keys(creds))}`).toBe(401);
      }
    }
    // Tokens that are not the widget's: signed with the session secret, another audience, expired, or tampered.
    const now = Math.floor(Date.now() / 1000);
    const claims = {
      sub: w.session_id,
      tid: owner.tenantId,
      cid: w.chat_id,
      gen: 0,
      jti: "a-well-signed-token",
      typ: "widget",
      iss: "ai-gateway",
      aud: "ai-gateway:widget",
      iat: now,
      exp: now + 300,
    };
    const { gen: _gen, jti: _jti, ...withoutGeneration } = claims;
    const forged = [
      // Without a generation and id (as signed before they existed), or of a generation the session never had.
      hs256(stack.widgetJwtSecret, withoutGeneration),
      hs256(stack.widgetJwtSecret, { ...claims, gen: 5 }),
      hs256(stack.jwtSecret, claims),
      hs256(stack.widgetJwtSecret, { ...claims, aud: "ai-gateway:session" }),
      hs256(stack.widgetJwtSecret, { ...claims, exp: now - 10 }),
      hs256(stack.widgetJwtSecret, { ...claims, typ: "access" }),
      `${w.token.slice(0, -2)}xx`,
    ];
    for (const token of forged) expect((await call(stack.edgeUrl, "POST", "/v1/apps/bot/widget/token", { token })).status).toBe(401);
    // The well-formed one works, and its claims are what the token view shows.
    expect((await call(stack.edgeUrl, "POST", "/v1/apps/bot/widget/token", { token: hs256(stack.widgetJwtSecret, claims) })).status).toBe(200);
    const view = await call(stack.edgeUrl, "POST", "/v1/apps/bot/widget/token", { token: w.token });
    expect(view.status).toBe(200);
    expect(view.body.data).toEqual({
      session_id: w.session_id,
      chat_id: w.chat_id,
      visitor_id: "visitor-isolation",
      conversation_id: null,
      expires_at: expect.stringMatching(/Z$/),
    });
    const ttl = Date.parse(view.body.data.expires_at) - Date.now();
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(15 * 60_000);
    // A session token cannot read another chat through the widget's feed: it is not a widget token.
    expect((await call(stack.edgeUrl, "GET", "/v1/apps/bot/widget/events", { token: owner.token })).status).toBe(401);
  });

  it("rotate on refresh; a reused refresh token ends the session everywhere", async () => {
    const first = await widgetSession(stack, sessionKey, "visitor-refresh");
    const second = await call(stack.edgeUrl, "POST", "/v1/apps/bot/widget/refresh", { body: { refresh_token: first.refresh_token } });
    expect(second.status).toBe(200);
    expect(second.body.data).toMatchObject({ session_id: first.session_id, chat_id: first.chat_id, token_type: "Bearer" });
    expect(second.body.data.refresh_token).not.toBe(first.refresh_token);
    const third = await call(stack.edgeUrl, "POST", "/v1/apps/bot/widget/refresh", { body: { refresh_token: second.body.data.refresh_token } });
    expect(third.status).toBe(200);
    // Warm both replicas' caches with the newest token.
    for (const url of [stack.edgeUrl, edge2]) expect((await call(url, "POST", "/v1/apps/bot/widget/token", { token: third.body.data.token })).status).toBe(200);

    // Reuse of a rotated token: 401, and the whole session is gone (newest access and refresh tokens too).
    const reuse = await call(stack.edgeUrl, "POST", "/v1/apps/bot/widget/refresh", { body: { refresh_token: first.refresh_token } });
    expect(reuse.status).toBe(401);
    expect(reuse.body.error).toBe("unauthorized");
    expect((await call(stack.edgeUrl, "POST", "/v1/apps/bot/widget/token", { token: third.body.data.token })).status).toBe(401);
    await expectRefusedSoon(edge2, third.body.data.token);
    expect((await call(stack.edgeUrl, "POST", "/v1/apps/bot/widget/refresh", { body: { refresh_token: third.body.data.refresh_token } })).status).toBe(401);

    // Garbage and other kinds of token.
    for (const refresh_token of ["nope", "wrt_nope", "rt_not_a_widget_token"]) {
      expect((await call(stack.edgeUrl, "POST", "/v1/apps/bot/widget/refresh", { body: { refresh_token } })).status).toBe(401);
    }
    expect((await call(stack.edgeUrl, "POST", "/v1/apps/bot/widget/refresh", { body: {} })).status).toBe(400);
  });

  it("a refresh in the same second as the session's creation gives a distinct token, and the rotated-away access token stops working on every replica", async () => {
    const first = await widgetSession(stack, sessionKey, "visitor-same-second");
    // Both replicas trust the first access token (and cache the session for 5 minutes).
    for (const url of [stack.edgeUrl, edge2]) expect((await call(url, "POST", "/v1/apps/bot/widget/token", { token: first.token })).status).toBe(200);
    const second = await call(stack.edgeUrl, "POST", "/v1/apps/bot/widget/refresh", { body: { refresh_token: first.refresh_token } });
    expect(second.status).toBe(200);
    expect(second.body.data.token).not.toBe(first.token);
    const jti = (token: string) => JSON.parse(Buffer.from(token.split(".")[1]!, "base64url").toString()).jti as string;
    expect(jti(second.body.data.token)).not.toBe(jti(first.token));
    // The old access token is refused at once here, and a broadcast hop away on the other replica.
    expect((await call(stack.edgeUrl, "POST", "/v1/apps/bot/widget/token", { token: first.token })).status).toBe(401);
    expect((await call(stack.edgeUrl, "GET", "/v1/apps/bot/widget/messages", { token: first.token })).status).toBe(401);
    await expectRefusedSoon(edge2, first.token);
    // The new one works on both.
    for (const url of [stack.edgeUrl, edge2])
      expect((await call(url, "POST", "/v1/apps/bot/widget/token", { token: second.body.data.token })).status).toBe(200);
  });

  it("of two concurrent uses of one refresh token, exactly one rotates", async () => {
    const w = await widgetSession(stack, sessionKey, "visitor-race");
    const results = await Promise.all(
      [stack.edgeUrl, edge2, stack.edgeUrl, edge2].map((url) => call(url, "POST", "/v1/apps/bot/widget/refresh", { body: { refresh_token: w.refresh_token } })),
    );
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    expect(results.filter((r) => r.status === 401)).toHaveLength(3);
  });

  it("revoke ends the session at once, on every replica", async () => {
    const w = await widgetSession(stack, sessionKey, "visitor-revoke");
    for (const url of [stack.edgeUrl, edge2]) expect((await call(url, "GET", "/v1/apps/bot/widget/messages", { token: w.token })).status).toBe(200);
    expect((await call(stack.edgeUrl, "POST", "/v1/apps/bot/widget/revoke", { token: w.token })).status).toBe(204);
    expect((await call(stack.edgeUrl, "GET", "/v1/apps/bot/widget/messages", { token: w.token })).status).toBe(401);
    await expectRefusedSoon(edge2, w.token);
    expect((await call(stack.edgeUrl, "POST", "/v1/apps/bot/widget/refresh", { body: { refresh_token: w.refresh_token } })).status).toBe(401);
    expect((await call(stack.edgeUrl, "POST", "/v1/apps/bot/widget/revoke", { token: w.token })).status).toBe(401);

    // The bot ending the chat ends its sessions too.
    const v = await widgetSession(stack, sessionKey, "visitor-ended");
    expect((await call(edge2, "POST", "/v1/apps/bot/widget/token", { token: v.token })).status).toBe(200);
    expect((await call(stack.edgeUrl, "POST", `/v1/apps/bot/chats/${v.chat_id}/actions`, { ...withApiKey(botKey), body: { action: "end" } })).status).toBe(202);
    await expectRefusedSoon(edge2, v.token);
  });
});

/**
 * The other replica's cache would trust the session for 5 minutes (TTL set
 * above); only the NATS broadcast can make it refuse within this window.
 */
async function expectRefusedSoon(url: string, token: string) {
  const until = Date.now() + 3_000;
  let status = 0;
  while (Date.now() < until) {
    status = (await call(url, "POST", "/v1/apps/bot/widget/token", { token })).status;
    if (status === 401) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  expect(status).toBe(401);
}

describe("widget events", () => {
  it("pages without gaps or repeats from every cursor while events are written concurrently", async () => {
    const tenant = await newTenant(stack.edgeUrl, "feed");
    const key = await keyWith(stack, tenant, ["*"]);
    const visitors = await Promise.all(Array.from({ length: 4 }, (_, i) => widgetSession(stack, key, `feed-visitor-${i}`)));
    const writes = 30;
    let writing = true;
    const seen: FeedEvent[] = [];
    // A reader polling with small, changing page sizes while 8 writers append.
    const reader = (async () => {
      let cursor = "";
      let n = 0;
      for (;;) {
        const done = !writing;
        const res = await call(stack.edgeUrl, "GET", `/v1/apps/bot/widget/events?limit=${1 + (n++ % 7)}${cursor ? `&cursor=${cursor}` : ""}`, withApiKey(key));
        expect(res.status).toBe(200);
        seen.push(...res.body.data.events);
        cursor = res.body.data.next_cursor;
        if (done && res.body.data.events.length === 0) return;
      }
    })();
    await Promise.all(
      visitors.flatMap((v, i) => [
        (async () => {
          for (let k = 0; k < writes; k++) await call(stack.edgeUrl, "POST", "/v1/apps/bot/widget/messages", { token: v.token, body: { text: `v${i}-${k}` } });
        })(),
        (async () => {
          for (let k = 0; k < writes; k++)
            await call(edge2, "POST", "/v1/apps/bot/messages/reply", { ...withApiKey(key), body: { chat_id: v.chat_id, text: `b${i}-${k}` } });
        })(),
      ]),
    );
    writing = false;
    await reader;

    const all = (await drain(stack.edgeUrl, "/v1/apps/bot/widget/events", withApiKey(key))).events;
    const messages = all.filter((e) => e.type === "message.created");
    expect(messages).toHaveLength(visitors.length * writes * 2);
    // Positions are 1..n without a hole, and the concurrent reader saw exactly that sequence.
    expect(all.map((e) => Number(e.cursor))).toEqual(all.map((_, i) => i + 1));
    expect(seen.map((e) => e.id)).toEqual(all.map((e) => e.id));
    // Each writer's own messages appear in the order it wrote them.
    for (let i = 0; i < visitors.length; i++) {
      const texts = messages.filter((e) => e.data.author === "visitor" && e.chat_id === visitors[i]!.chat_id).map((e) => e.data.text);
      expect(texts).toEqual(Array.from({ length: writes }, (_, k) => `v${i}-${k}`));
    }

    // From every cursor, a page is exactly the next events.
    for (let c = 0; c <= all.length; c++) {
      const res = await call(stack.edgeUrl, "GET", `/v1/apps/bot/widget/events?limit=5&cursor=${c}`, withApiKey(key));
      expect(res.body.data.events.map((e: FeedEvent) => e.id)).toEqual(all.slice(c, c + 5).map((e) => e.id));
      expect(res.body.data.next_cursor).toBe(String(Math.min(c + 5, all.length) || c));
    }

    // A widget token sees its own chat's events only: the same events, in the same order.
    const own = (await drain(stack.edgeUrl, "/v1/apps/bot/widget/events", { token: visitors[0]!.token }, "", 3)).events;
    expect(own.map((e) => e.id)).toEqual(all.filter((e) => e.chat_id === visitors[0]!.chat_id).map((e) => e.id));

    // Bounds.
    for (const q of ["limit=0", "limit=101", "limit=x", "cursor=abc", "cursor=-1", "cursor=1.5"]) {
      expect((await call(stack.edgeUrl, "GET", `/v1/apps/bot/widget/events?${q}`, withApiKey(key))).status, q).toBe(400);
    }
    const head = await call(stack.edgeUrl, "GET", `/v1/apps/bot/widget/events?cursor=${all.length}`, withApiKey(key));
    expect(head.body.data).toEqual({ events: [], next_cursor: String(all.length) });
  });

  it("reads with a bot:events:read key, the key as Bearer, or a widget token", async () => {
    const w = await widgetSession(stack, sessionKey, "visitor-carriers");
    expect((await call(stack.edgeUrl, "GET", "/v1/apps/bot/widget/events?limit=1", withApiKey(eventsKey))).status).toBe(200);
    expect((await call(stack.edgeUrl, "GET", "/v1/apps/bot/widget/events?limit=1", { token: eventsKey })).status).toBe(200);
    expect((await call(stack.edgeUrl, "GET", "/v1/apps/bot/widget/events?limit=1", { token: w.token })).status).toBe(200);
    expect((await call(stack.edgeUrl, "GET", "/v1/apps/bot/widget/events?limit=1")).status).toBe(401);
  });
});

describe("OpenAPI", () => {
  it("describes every bot, widget and conversation route with its credential and schemas", async () => {
    const doc = (await call(stack.edgeUrl, "GET", "/openapi.json")).body;
    const paths = [
      ["/v1/apps/bot", "post"],
      ["/v1/apps/bot/chats/{chatId}/messages", "get"],
      ["/v1/apps/bot/messages/{messageId}", "patch"],
      ["/v1/apps/bot/widget/auth", "post"],
      ["/v1/apps/bot/widget/refresh", "post"],
      ["/v1/apps/bot/widget/token", "post"],
      ["/v1/apps/bot/widget/events", "get"],
      ["/v1/conversations", "post"],
      ["/v1/conversations/inbox", "get"],
      ["/v1/conversations/{id}/participants/{participantId}", "delete"],
      ["/v1/conversations/{id}/widget-session", "post"],
      ["/v1/conversations/events", "get"],
      ["/v1/conversations/webhooks/{webhookId}/replay", "post"],
    ] as const;
    for (const [path, method] of paths) expect(doc.paths[path]?.[method], `${method} ${path}`).toBeDefined();
    expect(doc.paths["/v1/apps/bot/widget/token"].post.security).toEqual([{ widget: [] }]);
    expect(doc.paths["/v1/apps/bot/widget/events"].get.security).toEqual([{ widget: [] }, { apiKey: [] }, { apiKeyBearer: [] }]);
    expect(doc.paths["/v1/apps/bot/widget/events"].get["x-required-scope"]).toBe("bot:events:read");
    expect(doc.paths["/v1/conversations/webhooks"].post["x-required-scope"]).toBe("conversation:events:write");
    expect(doc.paths["/v1/apps/bot/widget/refresh"].post.security).toEqual([]);
    expect(doc.components.securitySchemes.widget).toMatchObject({ type: "http", scheme: "bearer" });
    expect(doc.paths["/v1/conversations/{id}"].get.responses["200"].content["application/json"].schema.properties.data.properties.participants).toBeDefined();
  });
});
