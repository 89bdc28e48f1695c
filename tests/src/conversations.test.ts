import { createHmac } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, newTenant, type Stack, startStack } from "@gateway/testkit";
import type { Tenant } from "./keys-helpers.js";
import { drain, keyWith, widgetSession, withApiKey, type FeedEvent } from "./widget-helpers.js";

type Received = { path: string; headers: Record<string, string | string[] | undefined>; raw: string; body: any };

let stack: Stack;
let owner: Tenant;
let other: Tenant;
let readKey: string;
let writeKey: string;
let hooksKey: string;
let allKey: string;
let otherKey: string;
let receiver: Server;
let hookBase: string;
const received: Received[] = [];
/** Per path: how many more requests to fail with 500 (Infinity: always). */
const failures = new Map<string, number>();
/** Paths whose failures answer only after this many ms (so that retries cannot run out while the service stops). */
const slowFailures = new Map<string, number>();

async function waitFor<T>(what: string, fn: () => Promise<T | undefined> | T | undefined, timeoutMs = 20_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await fn();
    if (value !== undefined) return value;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const sign = (secret: string, raw: string) => `sha256=${createHmac("sha256", secret).update(raw).digest("hex")}`;

beforeAll(async () => {
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("error", () => undefined);
    req.on("end", () => {
      const raw = Buffer.concat(chunks).toString("utf8");
      const path = req.url ?? "/";
      received.push({ path, headers: req.headers, raw, body: JSON.parse(raw) });
      const left = failures.get(path) ?? 0;
      if (left > 0) {
        failures.set(path, left - 1);
        const fail = () => res.writeHead(500).end("not now");
        const delay = slowFailures.get(path);
        if (delay) setTimeout(fail, delay);
        else fail();
      } else res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  hookBase = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  stack = await startStack({
    services: ["messaging"],
    env: { messaging: { ALLOW_PRIVATE_TARGETS: "true", CONVERSATION_WEBHOOK_BASE_DELAY_MS: "20", CONVERSATION_WEBHOOK_POLL_MS: "50" } },
  });
  owner = await newTenant(stack.edgeUrl, "hub");
  other = await newTenant(stack.edgeUrl, "hub-other");
  [readKey, writeKey, hooksKey, allKey, otherKey] = await Promise.all([
    keyWith(stack, owner, ["conversation:read"]),
    keyWith(stack, owner, ["conversation:write"]),
    keyWith(stack, owner, ["conversation:events:write"]),
    keyWith(stack, owner, ["*"]),
    keyWith(stack, other, ["*"]),
  ]);
}, 180_000);
afterAll(async () => {
  await stack?.shutdown();
  receiver?.close();
});

async function newConversation(key = writeKey, body: Record<string, unknown> = {}) {
  const res = await call(stack.edgeUrl, "POST", "/v1/conversations", { ...withApiKey(key), body });
  if (res.status !== 201) throw new Error(`create failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data;
}

describe("conversations", () => {
  it("creates, reads, lists by activity and updates with version checks", async () => {
    const c = await newConversation(writeKey, {
      subject: "Refund",
      metadata: { order: "A-1" },
      participants: [{ kind: "agent", external_id: "agent-7", display_name: "Grace", role: "owner" }],
    });
    expect(c).toMatchObject({
      id: expect.stringMatching(/^conv_/),
      subject: "Refund",
      status: "open",
      metadata: { order: "A-1" },
      version: 1,
      participants: [{ kind: "agent", external_id: "agent-7", display_name: "Grace", role: "owner", id: expect.stringMatching(/^cpt_/) }],
      channels: [],
    });
    const got = await call(stack.edgeUrl, "GET", `/v1/conversations/${c.id}`, withApiKey(readKey));
    expect(got.status).toBe(200);
    expect(got.body.data).toEqual(c);

    const later = await newConversation();
    let inbox = await call(stack.edgeUrl, "GET", "/v1/conversations/inbox", withApiKey(readKey));
    expect(inbox.body.data.map((x: { id: string }) => x.id).slice(0, 2)).toEqual([later.id, c.id]);

    const patched = await call(stack.edgeUrl, "PATCH", `/v1/conversations/${c.id}`, { ...withApiKey(writeKey), body: { status: "pending", version: 1 } });
    expect(patched.status).toBe(200);
    expect(patched.body.data).toMatchObject({ status: "pending", version: 2, subject: "Refund", metadata: { order: "A-1" } });
    // Activity moves it to the top of the inbox; the status filter works.
    inbox = await call(stack.edgeUrl, "GET", "/v1/conversations/inbox", withApiKey(readKey));
    expect(inbox.body.data[0].id).toBe(c.id);
    const pending = await call(stack.edgeUrl, "GET", "/v1/conversations/inbox?status=pending", withApiKey(readKey));
    expect(pending.body.data.map((x: { id: string }) => x.id)).toEqual([c.id]);

    const stale = await call(stack.edgeUrl, "PATCH", `/v1/conversations/${c.id}`, { ...withApiKey(writeKey), body: { status: "closed", version: 1 } });
    expect(stale.status).toBe(409);
    expect(stale.body.error).toBe("conflict");
    expect((await call(stack.edgeUrl, "GET", `/v1/conversations/${c.id}`, withApiKey(readKey))).body.data).toMatchObject({ status: "pending", version: 2 });
    const cleared = await call(stack.edgeUrl, "PATCH", `/v1/conversations/${c.id}`, { ...withApiKey(writeKey), body: { subject: null, metadata: { x: 1 } } });
    expect(cleared.body.data).toMatchObject({ subject: null, metadata: { x: 1 }, version: 3 });

    const bad: [string, string, unknown, number][] = [
      ["POST", "/v1/conversations", { subject: "x".repeat(257) }, 400],
      ["POST", "/v1/conversations", { metadata: [1] }, 400],
      ["POST", "/v1/conversations", { participants: [{ kind: "alien", external_id: "x" }] }, 400],
      [
        "POST",
        "/v1/conversations",
        {
          participants: [
            { kind: "agent", external_id: "a" },
            { kind: "agent", external_id: "a" },
          ],
        },
        400,
      ],
      ["POST", "/v1/conversations", { unknown: true }, 400],
      ["PATCH", `/v1/conversations/${c.id}`, { status: "archived" }, 400],
      ["PATCH", "/v1/conversations/conv_nope", { status: "open" }, 404],
      ["GET", "/v1/conversations/conv_nope", undefined, 404],
      ["GET", "/v1/conversations/inbox?limit=500", undefined, 400],
      ["GET", "/v1/conversations/bad%20id", undefined, 400],
    ];
    for (const [method, path, body, status] of bad) {
      const res = await call(stack.edgeUrl, method, path, { ...withApiKey(allKey), ...(body === undefined ? {} : { body }) });
      expect(res.status, `${method} ${path} ${JSON.stringify(body)}`).toBe(status);
      expect(res.body.request_id).toBe(res.headers.get("x-request-id"));
    }
  });

  it("adds, changes and removes participants", async () => {
    const c = await newConversation();
    const added = await call(stack.edgeUrl, "POST", `/v1/conversations/${c.id}/participants`, {
      ...withApiKey(writeKey),
      body: { kind: "visitor", external_id: "v-1" },
    });
    expect(added.status).toBe(201);
    expect(added.body.data).toMatchObject({ kind: "visitor", external_id: "v-1", role: "member", display_name: null, conversation_id: c.id });
    const pid = added.body.data.id;
    expect(
      (await call(stack.edgeUrl, "POST", `/v1/conversations/${c.id}/participants`, { ...withApiKey(writeKey), body: { kind: "visitor", external_id: "v-1" } }))
        .status,
    ).toBe(409);
    const changed = await call(stack.edgeUrl, "PATCH", `/v1/conversations/${c.id}/participants/${pid}`, {
      ...withApiKey(writeKey),
      body: { role: "observer", display_name: "Vi" },
    });
    expect(changed.status).toBe(200);
    expect(changed.body.data).toMatchObject({ role: "observer", display_name: "Vi" });
    expect(
      (await call(stack.edgeUrl, "PATCH", `/v1/conversations/${c.id}/participants/${pid}`, { ...withApiKey(writeKey), body: { role: "king" } })).status,
    ).toBe(400);
    expect(
      (await call(stack.edgeUrl, "PATCH", `/v1/conversations/${c.id}/participants/cpt_nope`, { ...withApiKey(writeKey), body: { role: "member" } })).status,
    ).toBe(404);
    expect((await call(stack.edgeUrl, "DELETE", `/v1/conversations/${c.id}/participants/${pid}`, withApiKey(writeKey))).status).toBe(204);
    expect((await call(stack.edgeUrl, "DELETE", `/v1/conversations/${c.id}/participants/${pid}`, withApiKey(writeKey))).status).toBe(404);
    expect((await call(stack.edgeUrl, "GET", `/v1/conversations/${c.id}`, withApiKey(readKey))).body.data.participants).toEqual([]);
    expect(
      (await call(stack.edgeUrl, "POST", "/v1/conversations/conv_nope/participants", { ...withApiKey(writeKey), body: { kind: "bot", external_id: "b" } }))
        .status,
    ).toBe(404);
  });

  it("attaches channels; a bot chat's messages then reach the conversation feed", async () => {
    const c = await newConversation();
    const w = await widgetSession(stack, allKey, "hub-visitor-1");
    const attached = await call(stack.edgeUrl, "POST", `/v1/conversations/${c.id}/channels`, {
      ...withApiKey(writeKey),
      body: { type: "bot_chat", ref: w.chat_id },
    });
    expect(attached.status).toBe(201);
    expect(attached.body.data).toMatchObject({ type: "bot_chat", ref: w.chat_id, conversation_id: c.id, id: expect.stringMatching(/^chn_/) });
    const second = await newConversation();
    expect(
      (await call(stack.edgeUrl, "POST", `/v1/conversations/${second.id}/channels`, { ...withApiKey(writeKey), body: { type: "bot_chat", ref: w.chat_id } }))
        .status,
    ).toBe(409);
    expect(
      (await call(stack.edgeUrl, "POST", `/v1/conversations/${c.id}/channels`, { ...withApiKey(writeKey), body: { type: "bot_chat", ref: "chat_nope" } }))
        .status,
    ).toBe(404);
    expect((await call(stack.edgeUrl, "POST", `/v1/conversations/${c.id}/channels`, { ...withApiKey(writeKey), body: { type: "fax", ref: "1" } })).status).toBe(
      400,
    );
    expect(
      (await call(stack.edgeUrl, "POST", `/v1/conversations/${c.id}/channels`, { ...withApiKey(writeKey), body: { type: "external", ref: "crm:ticket/42" } }))
        .status,
    ).toBe(201);
    expect(
      (await call(stack.edgeUrl, "POST", `/v1/conversations/${c.id}/channels`, { ...withApiKey(writeKey), body: { type: "external", ref: "crm:ticket/42" } }))
        .status,
    ).toBe(409);

    const before = (await drain(stack.edgeUrl, "/v1/conversations/events", withApiKey(readKey))).cursor;
    const msg = await call(stack.edgeUrl, "POST", "/v1/apps/bot/widget/messages", { token: w.token, body: { text: "help me" } });
    const after = await drain(stack.edgeUrl, "/v1/conversations/events", withApiKey(readKey), before);
    expect(after.events).toHaveLength(1);
    expect(after.events[0]).toMatchObject({
      type: "message.created",
      conversation_id: c.id,
      chat_id: w.chat_id,
      data: { id: msg.body.data.id, text: "help me", author: "visitor" },
    });
    const detail = await call(stack.edgeUrl, "GET", `/v1/conversations/${c.id}`, withApiKey(readKey));
    expect(detail.body.data.channels.map((ch: { type: string }) => ch.type)).toEqual(["bot_chat", "external"]);
  });

  it("changes and removes channels; a chat moved out stops reaching the conversation feed", async () => {
    const c = await newConversation();
    const [a, b] = [await widgetSession(stack, allKey, "hub-visitor-move-a"), await widgetSession(stack, allKey, "hub-visitor-move-b")];
    const ch = (
      await call(stack.edgeUrl, "POST", `/v1/conversations/${c.id}/channels`, { ...withApiKey(writeKey), body: { type: "bot_chat", ref: a.chat_id } })
    ).body.data;
    const path = `/v1/conversations/${c.id}/channels/${ch.id}`;
    const moved = await call(stack.edgeUrl, "PATCH", path, { ...withApiKey(writeKey), body: { ref: b.chat_id } });
    expect(moved.status).toBe(200);
    expect(moved.body.data).toEqual({ id: ch.id, conversation_id: c.id, type: "bot_chat", ref: b.chat_id, created_at: ch.created_at });

    const before = (await drain(stack.edgeUrl, "/v1/conversations/events", withApiKey(readKey))).cursor;
    await call(stack.edgeUrl, "POST", "/v1/apps/bot/widget/messages", { token: a.token, body: { text: "from the old chat" } });
    await call(stack.edgeUrl, "POST", "/v1/apps/bot/widget/messages", { token: b.token, body: { text: "from the new chat" } });
    const after = await drain(stack.edgeUrl, "/v1/conversations/events", withApiKey(readKey), before);
    expect(after.events.map((e) => [e.type, e.chat_id])).toEqual([["message.created", b.chat_id]]);

    const external = await call(stack.edgeUrl, "PATCH", path, { ...withApiKey(writeKey), body: { type: "external", ref: "crm:ticket/7" } });
    expect(external.body.data).toMatchObject({ id: ch.id, type: "external", ref: "crm:ticket/7" });
    expect((await call(stack.edgeUrl, "PATCH", path, { ...withApiKey(writeKey), body: { type: "fax", ref: "1" } })).status).toBe(400);
    expect((await call(stack.edgeUrl, "PATCH", path, { ...withApiKey(writeKey), body: { type: "external" } })).status).toBe(400);
    expect((await call(stack.edgeUrl, "PATCH", path, { ...withApiKey(writeKey), body: { ref: "x", extra: 1 } })).status).toBe(400);
    expect((await call(stack.edgeUrl, "PATCH", path, { ...withApiKey(writeKey), body: { type: "bot_chat", ref: "chat_nope" } })).status).toBe(404);
    const taken = await newConversation();
    await call(stack.edgeUrl, "POST", `/v1/conversations/${taken.id}/channels`, { ...withApiKey(writeKey), body: { type: "external", ref: "crm:ticket/8" } });
    const conflict = await call(stack.edgeUrl, "PATCH", path, { ...withApiKey(writeKey), body: { ref: "crm:ticket/8" } });
    expect(conflict.status).toBe(409);
    expect(conflict.body).toMatchObject({ error: "conflict", request_id: expect.any(String) });
    expect((await call(stack.edgeUrl, "PATCH", `/v1/conversations/${c.id}/channels/chn_nope`, { ...withApiKey(writeKey), body: { ref: "y" } })).status).toBe(
      404,
    );

    expect((await call(stack.edgeUrl, "DELETE", path, withApiKey(writeKey))).status).toBe(204);
    expect((await call(stack.edgeUrl, "DELETE", path, withApiKey(writeKey))).status).toBe(404);
    expect((await call(stack.edgeUrl, "GET", `/v1/conversations/${c.id}`, withApiKey(readKey))).body.data.channels).toEqual([]);
    const feed = await drain(stack.edgeUrl, "/v1/conversations/events", withApiKey(readKey), before);
    expect(feed.events.filter((e) => e.conversation_id === c.id).map((e) => e.type)).toEqual(["message.created", "channel.updated", "channel.removed"]);
  });

  it("opens a widget session in a conversation: the chat becomes a channel and the visitor a participant", async () => {
    const c = await newConversation();
    const res = await call(stack.edgeUrl, "POST", `/v1/conversations/${c.id}/widget-session`, {
      ...withApiKey(writeKey),
      body: { visitor_id: "hub-visitor-2", display_name: "Lin" },
    });
    expect(res.status).toBe(201);
    const grant = res.body.data;
    expect(grant).toMatchObject({ conversation_id: c.id, chat_id: expect.stringMatching(/^chat_/), token_type: "Bearer" });
    const token = await call(stack.edgeUrl, "POST", "/v1/apps/bot/widget/token", { token: grant.token });
    expect(token.body.data).toMatchObject({ conversation_id: c.id, chat_id: grant.chat_id, visitor_id: "hub-visitor-2" });
    const detail = (await call(stack.edgeUrl, "GET", `/v1/conversations/${c.id}`, withApiKey(readKey))).body.data;
    expect(detail.channels).toMatchObject([{ type: "bot_chat", ref: grant.chat_id }]);
    expect(detail.participants).toMatchObject([{ kind: "visitor", external_id: "hub-visitor-2", display_name: "Lin" }]);
    // A second session for the same visitor reuses chat, channel and participant.
    const again = await call(stack.edgeUrl, "POST", `/v1/conversations/${c.id}/widget-session`, {
      ...withApiKey(writeKey),
      body: { visitor_id: "hub-visitor-2" },
    });
    expect(again.body.data.chat_id).toBe(grant.chat_id);
    const after = (await call(stack.edgeUrl, "GET", `/v1/conversations/${c.id}`, withApiKey(readKey))).body.data;
    expect(after.channels).toHaveLength(1);
    expect(after.participants).toHaveLength(1);
    // That visitor's chat cannot join another conversation.
    const elsewhere = await newConversation();
    expect(
      (
        await call(stack.edgeUrl, "POST", `/v1/conversations/${elsewhere.id}/widget-session`, {
          ...withApiKey(writeKey),
          body: { visitor_id: "hub-visitor-2" },
        })
      ).status,
    ).toBe(409);
    expect(
      (await call(stack.edgeUrl, "POST", "/v1/conversations/conv_nope/widget-session", { ...withApiKey(writeKey), body: { visitor_id: "x" } })).status,
    ).toBe(404);
  });

  it("pages the conversation feed without gaps or repeats under concurrent writers", async () => {
    const tenant = await newTenant(stack.edgeUrl, "hub-feed");
    const key = await keyWith(stack, tenant, ["*"]);
    const conversations = await Promise.all(Array.from({ length: 3 }, () => newConversation(key)));
    let writing = true;
    const seen: FeedEvent[] = [];
    const reader = (async () => {
      let cursor = "";
      for (let n = 0; ; n++) {
        const done = !writing;
        const res = await call(stack.edgeUrl, "GET", `/v1/conversations/events?limit=${1 + (n % 5)}${cursor ? `&cursor=${cursor}` : ""}`, withApiKey(key));
        seen.push(...res.body.data.events);
        cursor = res.body.data.next_cursor;
        if (done && res.body.data.events.length === 0) return;
      }
    })();
    await Promise.all(
      conversations.flatMap((c) =>
        [0, 1, 2].map(async (w) => {
          for (let k = 0; k < 10; k++) {
            const res = await call(stack.edgeUrl, "POST", `/v1/conversations/${c.id}/participants`, {
              ...withApiKey(key),
              body: { kind: "external", external_id: `w${w}-${k}` },
            });
            expect(res.status).toBe(201);
          }
        }),
      ),
    );
    writing = false;
    await reader;
    const all = (await drain(stack.edgeUrl, "/v1/conversations/events", withApiKey(key))).events;
    expect(all).toHaveLength(3 + 3 * 3 * 10);
    expect(all.map((e) => Number(e.cursor))).toEqual(all.map((_, i) => i + 1));
    expect(seen.map((e) => e.id)).toEqual(all.map((e) => e.id));
    for (let c = 0; c <= all.length; c += 1) {
      const res = await call(stack.edgeUrl, "GET", `/v1/conversations/events?limit=4&cursor=${c}`, withApiKey(key));
      expect(res.body.data.events.map((e: FeedEvent) => e.id)).toEqual(all.slice(c, c + 4).map((e) => e.id));
    }
    expect((await call(stack.edgeUrl, "GET", "/v1/conversations/events?cursor=x", withApiKey(key))).status).toBe(400);
  });
});

describe("conversation webhooks", () => {
  it("delivers signed events, retries failures with the same event id, and replays from a cursor", async () => {
    const secret = "a-webhook-secret-of-some-length";
    const path = `/hook-${Date.now()}`;
    failures.set(path, 2);
    const reg = await call(stack.edgeUrl, "POST", "/v1/conversations/webhooks", { ...withApiKey(hooksKey), body: { url: `${hookBase}${path}`, secret } });
    expect(reg.status).toBe(201);
    expect(reg.body.data).toMatchObject({
      id: expect.stringMatching(/^cwh_/),
      url: `${hookBase}${path}`,
      secret: "[redacted]",
      event_types: [],
      status: "active",
      revoked_at: null,
    });
    const webhookId = reg.body.data.id;
    expect(JSON.stringify(reg.body)).not.toContain(secret);

    const c = await newConversation(writeKey, { subject: "hooked" });
    const forEvent = (type: string) => received.filter((r) => r.path === path && r.body.event === type);
    const created = await waitFor("conversation.created delivered after two failures", () =>
      forEvent("conversation.created").length >= 3 ? forEvent("conversation.created") : undefined,
    );
    for (const r of created) {
      expect(r.headers["x-service-signature"]).toBe(sign(secret, r.raw));
      expect(r.headers["x-service-event-id"]).toBe(r.body.event_id);
      expect(r.headers["content-type"]).toMatch(/application\/json/);
    }
    expect(new Set(created.map((r) => r.body.event_id)).size).toBe(1);
    expect(created[0]!.body).toMatchObject({
      event: "conversation.created",
      conversation_id: c.id,
      data: { id: c.id, subject: "hooked" },
      replay: false,
      cursor: expect.stringMatching(/^\d+$/),
    });

    const deliveries = await waitFor("delivery recorded", async () => {
      const res = await call(stack.edgeUrl, "GET", `/v1/conversations/webhooks/${webhookId}/deliveries`, withApiKey(hooksKey));
      const d = res.body.data.find((x: { event_type: string; state: string }) => x.event_type === "conversation.created" && x.state === "delivered");
      return d ? res.body.data : undefined;
    });
    expect(deliveries.find((d: { event_type: string }) => d.event_type === "conversation.created")).toMatchObject({
      state: "delivered",
      attempts: 3,
      last_status: 204,
      last_error: null,
      replay: false,
    });

    // Replay from the start: the same events again, with their original ids, marked as replays.
    const originals = received.filter((r) => r.path === path && !r.body.replay);
    const replay = await call(stack.edgeUrl, "POST", `/v1/conversations/webhooks/${webhookId}/replay`, { ...withApiKey(hooksKey), body: {} });
    expect(replay.status).toBe(202);
    expect(replay.body.data).toMatchObject({ webhook_id: webhookId, from_cursor: "0", queued: expect.any(Number) });
    expect(replay.body.data.queued).toBeGreaterThanOrEqual(1);
    const replayed = await waitFor("replayed deliveries", () => {
      const r = received.filter((x) => x.path === path && x.body.replay);
      return r.length >= replay.body.data.queued ? r : undefined;
    });
    for (const r of replayed) expect(r.headers["x-service-signature"]).toBe(sign(secret, r.raw));
    expect(replayed.map((r) => r.body.event_id)).toContain(created[0]!.body.event_id);
    // Replay from the cursor of the created event: only what came after it.
    const fromCursor = await call(stack.edgeUrl, "POST", `/v1/conversations/webhooks/${webhookId}/replay`, {
      ...withApiKey(hooksKey),
      body: { cursor: created[0]!.body.cursor, limit: 1000 },
    });
    expect(fromCursor.body.data.from_cursor).toBe(created[0]!.body.cursor);
    const feedAfter = (await drain(stack.edgeUrl, "/v1/conversations/events", withApiKey(readKey), created[0]!.body.cursor)).events;
    expect(fromCursor.body.data.queued).toBe(feedAfter.length);
    expect(originals.length).toBeGreaterThan(0);

    // The secret is stored encrypted, never in plaintext.
    const rows = await stack.sql<{ secret_ciphertext: Buffer }>("messaging", "SELECT secret_ciphertext FROM conversation_webhooks WHERE id = $1", [webhookId]);
    expect(rows[0]!.secret_ciphertext.toString("latin1")).not.toContain(secret);
    const listed = await call(stack.edgeUrl, "GET", "/v1/conversations/webhooks", withApiKey(hooksKey));
    expect(listed.body.data.find((w: { id: string }) => w.id === webhookId)).toMatchObject({ secret: "[redacted]" });
    expect(JSON.stringify(listed.body)).not.toContain(secret);

    // Revoke: nothing more is sent; replay is refused.
    expect((await call(stack.edgeUrl, "DELETE", `/v1/conversations/webhooks/${webhookId}`, withApiKey(hooksKey))).status).toBe(204);
    expect((await call(stack.edgeUrl, "DELETE", `/v1/conversations/webhooks/${webhookId}`, withApiKey(hooksKey))).status).toBe(204);
    expect((await call(stack.edgeUrl, "POST", `/v1/conversations/webhooks/${webhookId}/replay`, { ...withApiKey(hooksKey), body: {} })).status).toBe(409);
    const count = received.filter((r) => r.path === path).length;
    await newConversation();
    await new Promise((r) => setTimeout(r, 500));
    expect(received.filter((r) => r.path === path).length).toBe(count);
  });

  it("gives up after 8 attempts (exhausted) and filters by event type", async () => {
    const path = `/down-${Date.now()}`;
    failures.set(path, Number.POSITIVE_INFINITY);
    const reg = await call(stack.edgeUrl, "POST", "/v1/conversations/webhooks", {
      ...withApiKey(hooksKey),
      body: { url: `${hookBase}${path}`, secret: "0123456789abcdef", event_types: ["conversation.updated"] },
    });
    expect(reg.status).toBe(201);
    const c = await newConversation();
    await call(stack.edgeUrl, "PATCH", `/v1/conversations/${c.id}`, { ...withApiKey(writeKey), body: { status: "closed" } });
    const exhausted = await waitFor("exhausted delivery", async () => {
      const res = await call(stack.edgeUrl, "GET", `/v1/conversations/webhooks/${reg.body.data.id}/deliveries`, withApiKey(hooksKey));
      return res.body.data.find((d: { state: string }) => d.state === "exhausted");
    });
    expect(exhausted).toMatchObject({ event_type: "conversation.updated", attempts: 8, last_status: 500, next_attempt_at: null });
    const hits = received.filter((r) => r.path === path);
    expect(hits).toHaveLength(8);
    expect(hits.every((r) => r.body.event === "conversation.updated")).toBe(true);
    expect(new Set(hits.map((r) => r.headers["x-service-event-id"])).size).toBe(1);
  });

  it("keeps undelivered events across a restart of the messaging service", async () => {
    const path = `/later-${Date.now()}`;
    failures.set(path, Number.POSITIVE_INFINITY);
    // With a 20 ms base delay, 8 quick failures exhaust the delivery in about 2.5 s: a stop
    // that is slow under load must not see it exhausted. Slow failures take 8 × 1.5 s.
    slowFailures.set(path, 1_500);
    const secret = "restart-secret-0123456789";
    const reg = await call(stack.edgeUrl, "POST", "/v1/conversations/webhooks", {
      ...withApiKey(hooksKey),
      body: { url: `${hookBase}${path}`, secret, event_types: ["conversation.created"] },
    });
    const c = await newConversation();
    await waitFor("a first failed attempt", () => (received.some((r) => r.path === path) ? true : undefined));
    await stack.stop("messaging");
    failures.set(path, 0);
    const pending = await stack.sql<{ state: string }>("messaging", "SELECT state FROM webhook_deliveries WHERE webhook_id = $1", [reg.body.data.id]);
    expect(pending.map((p) => p.state)).toContain("pending");
    await stack.start("messaging");
    const ok = await waitFor(
      "delivery after restart",
      async () => {
        const rows = await stack.sql<{ state: string }>("messaging", "SELECT state FROM webhook_deliveries WHERE webhook_id = $1", [reg.body.data.id]);
        return rows[0]?.state === "delivered" ? rows : undefined;
      },
      40_000,
    ); // an attempt cut by the stop is retried once its claim's delivery timeout has passed
    expect(ok).toHaveLength(1);
    const last = received.filter((r) => r.path === path).at(-1)!;
    expect(last.body).toMatchObject({ event: "conversation.created", conversation_id: c.id });
    expect(last.headers["x-service-signature"]).toBe(sign(secret, last.raw));
  }, 90_000);

  it("refuses bad registrations", async () => {
    const cases: Record<string, unknown>[] = [
      { url: `${hookBase}/x`, secret: "short" },
      { url: `${hookBase}/x`, secret: "x".repeat(257) },
      { url: "not a url", secret: "0123456789abcdef" },
      { url: "ftp://example.com/x", secret: "0123456789abcdef" },
      { url: `${hookBase}/x`, secret: "0123456789abcdef", event_types: ["nope"] },
      { url: `${hookBase}/x` },
    ];
    for (const body of cases)
      expect((await call(stack.edgeUrl, "POST", "/v1/conversations/webhooks", { ...withApiKey(hooksKey), body })).status, JSON.stringify(body)).toBe(400);
    expect((await call(stack.edgeUrl, "DELETE", "/v1/conversations/webhooks/cwh_nope", withApiKey(hooksKey))).status).toBe(404);
    expect((await call(stack.edgeUrl, "POST", "/v1/conversations/webhooks/cwh_nope/replay", { ...withApiKey(hooksKey), body: {} })).status).toBe(404);
    expect((await call(stack.edgeUrl, "GET", "/v1/conversations/webhooks/cwh_nope/deliveries", withApiKey(hooksKey))).status).toBe(404);
  });
});

describe("conversation scopes and tenancy", () => {
  it("needs conversation:read to read, conversation:write to write, conversation:events:write for webhooks", async () => {
    const c = await newConversation();
    const denied: [string, string, string, unknown][] = [
      [readKey, "POST", "/v1/conversations", {}],
      [readKey, "PATCH", `/v1/conversations/${c.id}`, { status: "open" }],
      [readKey, "POST", `/v1/conversations/${c.id}/participants`, { kind: "bot", external_id: "b" }],
      [readKey, "POST", `/v1/conversations/${c.id}/channels`, { type: "external", ref: "r" }],
      [readKey, "PATCH", `/v1/conversations/${c.id}/channels/chn_x`, { ref: "r" }],
      [readKey, "DELETE", `/v1/conversations/${c.id}/channels/chn_x`, undefined],
      [readKey, "POST", `/v1/conversations/${c.id}/widget-session`, { visitor_id: "v" }],
      [writeKey, "GET", "/v1/conversations/inbox", undefined],
      [writeKey, "GET", `/v1/conversations/${c.id}`, undefined],
      [writeKey, "GET", "/v1/conversations/events", undefined],
      [writeKey, "POST", "/v1/conversations/webhooks", { url: `${hookBase}/x`, secret: "0123456789abcdef" }],
      [readKey, "GET", "/v1/conversations/webhooks", undefined],
      [hooksKey, "GET", "/v1/conversations/inbox", undefined],
    ];
    for (const [key, method, path, body] of denied) {
      const res = await call(stack.edgeUrl, method, path, { ...withApiKey(key), ...(body === undefined ? {} : { body }) });
      expect(res.status, `${method} ${path}`).toBe(403);
    }
    expect((await call(stack.edgeUrl, "GET", "/v1/conversations/inbox")).status).toBe(401);
    expect((await call(stack.edgeUrl, "GET", "/v1/conversations/inbox", { token: owner.token })).status).toBe(401);
  });

  it("another tenant's conversations, participants, webhooks and events do not exist for it", async () => {
    const c = await newConversation(writeKey, { participants: [{ kind: "agent", external_id: "a-1" }] });
    const pid = c.participants[0].id;
    const chid = (
      await call(stack.edgeUrl, "POST", `/v1/conversations/${c.id}/channels`, { ...withApiKey(writeKey), body: { type: "external", ref: "tenancy-ref" } })
    ).body.data.id;
    const hook = await call(stack.edgeUrl, "POST", "/v1/conversations/webhooks", {
      ...withApiKey(hooksKey),
      body: { url: `${hookBase}/tenancy`, secret: "0123456789abcdef" },
    });
    const notFound: [string, string, unknown][] = [
      ["GET", `/v1/conversations/${c.id}`, undefined],
      ["PATCH", `/v1/conversations/${c.id}`, { status: "closed" }],
      ["POST", `/v1/conversations/${c.id}/participants`, { kind: "bot", external_id: "b" }],
      ["PATCH", `/v1/conversations/${c.id}/participants/${pid}`, { role: "owner" }],
      ["DELETE", `/v1/conversations/${c.id}/participants/${pid}`, undefined],
      ["POST", `/v1/conversations/${c.id}/channels`, { type: "external", ref: "x" }],
      ["PATCH", `/v1/conversations/${c.id}/channels/${chid}`, { ref: "theirs" }],
      ["DELETE", `/v1/conversations/${c.id}/channels/${chid}`, undefined],
      ["POST", `/v1/conversations/${c.id}/widget-session`, { visitor_id: "v" }],
      ["DELETE", `/v1/conversations/webhooks/${hook.body.data.id}`, undefined],
      ["POST", `/v1/conversations/webhooks/${hook.body.data.id}/replay`, {}],
      ["GET", `/v1/conversations/webhooks/${hook.body.data.id}/deliveries`, undefined],
    ];
    for (const [method, path, body] of notFound) {
      const res = await call(stack.edgeUrl, method, path, { ...withApiKey(otherKey), ...(body === undefined ? {} : { body }) });
      expect(res.status, `${method} ${path}`).toBe(404);
    }
    // Their own chat cannot be attached to our conversation, nor ours to theirs.
    const theirChat = await widgetSession(stack, otherKey, "tenancy-visitor");
    expect(
      (await call(stack.edgeUrl, "POST", `/v1/conversations/${c.id}/channels`, { ...withApiKey(allKey), body: { type: "bot_chat", ref: theirChat.chat_id } }))
        .status,
    ).toBe(404);
    const inbox = await call(stack.edgeUrl, "GET", "/v1/conversations/inbox", withApiKey(otherKey));
    expect(inbox.body.data.map((x: { id: string }) => x.id)).not.toContain(c.id);
    const hooks = await call(stack.edgeUrl, "GET", "/v1/conversations/webhooks", withApiKey(otherKey));
    expect(hooks.body.data.map((x: { id: string }) => x.id)).not.toContain(hook.body.data.id);
    const { events } = await drain(stack.edgeUrl, "/v1/conversations/events", withApiKey(otherKey));
    expect(events.some((e) => e.conversation_id === c.id)).toBe(false);
    // Our conversation is untouched.
    expect((await call(stack.edgeUrl, "GET", `/v1/conversations/${c.id}`, withApiKey(readKey))).body.data).toMatchObject({
      version: 1,
      participants: [{ id: pid, role: "member" }],
      channels: [{ id: chid, ref: "tenancy-ref" }],
    });
  });
});
