// The embeddable chat widget and the console inbox in a real browser (Debian's Chromium
// through playwright-core) against the real stack. A shop's page, served by this test
// from another origin under a strict CSP, embeds /widget.js; its own server opens the
// widget session with the API key (the key never reaches the visitor's browser). The
// visitor writes, the customer sees it arrive in the console inbox without reloading and
// replies, the visitor sees the reply, reloads, and keeps the conversation. The inbox also
// shows a SocialOps thread with its replies' delivery states and a hub conversation.
// The push page sends test messages (402, 207, 200, 502 per target) and shows the log;
// the conversations page manages participants, channels, widget sessions and webhooks.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, newTenant, startCallbackReceiver, startStack, type CallbackReceiver, type Stack } from "@gateway/testkit";
import { launchBrowser, openPage, screenshot } from "./support/browser.js";

let stack: Stack;
let browser: Browser;
let receiver: CallbackReceiver;
let refusing: CallbackReceiver;
let shop: Server;
let shopUrl = "";
let tenant: Awaited<ReturnType<typeof newTenant>>;
let apiKey = "";
let conversationId = "";
const sessionCalls: { visitor_id: string }[] = [];
const pageErrors: string[] = [];

const SCOPES = [
  "conversation:events:write",
  "push:send",
  "bot:session:create",
  "bot:send",
  "bot:events:read",
  "socialops:read",
  "socialops:write",
  "conversation:read",
  "conversation:write",
];

/** The customer's own site: a page that embeds the widget, and the server side that opens widget sessions. */
async function startShop(edgeUrl: string): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    if (req.method === "GET" && req.url === "/") {
      res.writeHead(200, {
        "content-type": "text/html; charset=utf-8",
        // Only what the widget needs: its script and its API calls on the gateway, and this server.
        "content-security-policy": `default-src 'none'; script-src ${edgeUrl}; connect-src 'self' ${edgeUrl}; style-src 'none'; img-src 'none'`,
      });
      res.end(`<!doctype html><html><head><meta charset="utf-8"><title>Example Shop</title></head>
<body><h1>Example Shop</h1><p>Plain HTML from another origin; the chat lives in the corner.</p>
<script src="${edgeUrl}/widget.js" data-session-url="/widget-session" data-title="Chat with Example Shop" async></script></body></html>`);
      return;
    }
    if (req.method === "POST" && req.url === "/widget-session") {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const { visitor_id } = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { visitor_id: string };
        sessionCalls.push({ visitor_id });
        // Server side: the API key stays here.
        void call(edgeUrl, "POST", "/v1/apps/bot/widget/auth", { headers: { "x-api-key": apiKey }, body: { visitor_id, display_name: "Ada Visitor" } }).then(
          (auth) => {
            res.writeHead(auth.status, { "content-type": "application/json" }).end(JSON.stringify(auth.body));
          },
        );
      });
      return;
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  // "localhost" and the edge's 127.0.0.1 (and their ports) are different origins.
  return { server, url: `http://localhost:${(server.address() as AddressInfo).port}` };
}

beforeAll(async () => {
  receiver = await startCallbackReceiver((_n, body) => (body.includes("cannot be delivered") ? 500 : 200));
  refusing = await startCallbackReceiver(() => 500);
  stack = await startStack({
    readyTimeoutMs: 150_000,
    services: ["ledger", "managed-ai", "messaging", "files"],
    env: {
      edge: { WIDGET_TOKEN_TTL_SECONDS: "30" },
      messaging: { ALLOW_PRIVATE_TARGETS: "true", REPLY_TIMEOUT_MS: "1500", REPLY_BASE_DELAY_MS: "100", REPLY_MAX_ATTEMPTS: "2" },
    },
  });
  tenant = await newTenant(stack.edgeUrl, "inbox");
  const key = await call<{ data: { key: string } }>(stack.edgeUrl, "POST", "/console/keys", {
    token: tenant.token,
    body: { name: "support desk", scopes: SCOPES },
  });
  expect(key.status).toBe(201);
  apiKey = key.body.data.key;
  const instance = await call(stack.edgeUrl, "POST", "/console/services", {
    token: tenant.token,
    body: {
      service_id: "socialops",
      alias: "support",
      status: "active",
      config: { reply_webhook_url: receiver.url, reply_webhook_secret: "reply-secret-0123456789" },
    },
  });
  expect(instance.status).toBe(201);
  const inbound = await call(stack.edgeUrl, "POST", "/v1/apps/socialops/support/webhook/generic", {
    headers: { "x-api-key": apiKey },
    body: { event_id: "evt-1", thread_id: "ext-thread-1", subject: "Where is my parcel?", text: "It was due yesterday.", author: "grace@example.com" },
  });
  expect(inbound.status).toBe(202);
  const conversation = await call<{ data: { id: string } }>(stack.edgeUrl, "POST", "/v1/conversations", {
    headers: { "x-api-key": apiKey },
    body: { subject: "Invoice address change", participants: [{ kind: "external", external_id: "crm-4711", display_name: "Linus (CRM)" }] },
  });
  expect(conversation.status).toBe(201);
  conversationId = conversation.body.data.id;
  const pushTargets: Record<string, unknown[]> = {
    alerts: [
      { id: "ok-hook", type: "webhook", url: receiver.url, secret: "push-secret-0123456789" },
      { id: "bad-hook", type: "webhook", url: refusing.url },
      { id: "tg", type: "telegram", bot_token: "123:abc", chat_id: 42, enabled: false },
    ],
    pager: [{ id: "pager-hook", type: "webhook", url: receiver.url }],
    legacy: [{ id: "old-hook", type: "webhook", url: refusing.url }],
  };
  for (const [alias, targets] of Object.entries(pushTargets)) {
    const put = await call(stack.edgeUrl, "POST", "/console/services", {
      token: tenant.token,
      body: { service_id: "webhook-push", alias, status: "active", config: { targets } },
    });
    expect(put.status).toBe(201);
  }
  ({ server: shop, url: shopUrl } = await startShop(stack.edgeUrl));
  browser = await launchBrowser();
}, 240_000);
afterAll(async () => {
  await browser?.close();
  await new Promise((r) => (shop ? shop.close(r) : r(undefined)));
  await stack?.shutdown();
  await receiver?.close();
  await refusing?.close();
});

async function signInToInbox(page: Page) {
  await page.goto(`${stack.edgeUrl}/app/`);
  await page.getByLabel("Email", { exact: true }).fill(tenant.email);
  await page.getByLabel("Password", { exact: true }).fill(tenant.password);
  await page.getByRole("button", { name: "Sign in" }).last().click();
  await page.locator("main h1", { hasText: "Overview" }).waitFor();
  await page.goto(`${stack.edgeUrl}/app/#/inbox`);
  await page.getByLabel("API key", { exact: true }).fill(apiKey);
  await page.getByRole("button", { name: "Use this key" }).click();
}

describe("the chat widget and the inbox", () => {
  let visitor: Page;
  let agent: Page;
  const visitorRequests: { url: string; headers: Record<string, string> }[] = [];
  const cspViolations: string[] = [];

  it("serves /widget.js small, cacheable and loadable from any origin, with CORS on the widget routes only", async () => {
    const res = await fetch(`${stack.edgeUrl}/widget.js`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/javascript; charset=utf-8");
    expect(res.headers.get("cross-origin-resource-policy")).toBe("cross-origin");
    expect(res.headers.get("content-security-policy")).toBe("default-src 'none'; frame-ancestors 'none'");
    const body = await res.text();
    expect(body.length).toBeLessThan(16_000);
    expect(body).not.toMatch(/https?:\/\/(?!www\.w3\.org)/); // no third-party URL inside
    const preflight = await fetch(`${stack.edgeUrl}/v1/apps/bot/widget/events`, {
      method: "OPTIONS",
      headers: { origin: shopUrl, "access-control-request-method": "GET", "access-control-request-headers": "authorization" },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-origin")).toBe("*");
    const keyRoute = await fetch(`${stack.edgeUrl}/v1/apps/bot/chats`, { headers: { origin: shopUrl, "x-api-key": apiKey } });
    expect(keyRoute.status).toBe(200);
    expect(keyRoute.headers.get("access-control-allow-origin")).toBeNull();
  });

  it("the customer's inbox is open before the visitor arrives: the SocialOps thread and the conversation are listed", async () => {
    agent = await openPage(browser, pageErrors);
    await signInToInbox(agent);
    await agent.getByTestId("inbox-item").filter({ hasText: "Where is my parcel?" }).waitFor();
    await agent.getByTestId("inbox-item").filter({ hasText: "Invoice address change" }).waitFor();
    expect(await agent.getByTestId("inbox-item").filter({ hasText: "Where is my parcel?" }).locator(".unread").textContent()).toBe("1");
  });

  it("a visitor on another origin writes through the widget; the key never reaches their browser", async () => {
    visitor = await openPage(browser, pageErrors);
    visitor.on("request", (req) => visitorRequests.push({ url: req.url(), headers: req.headers() }));
    visitor.on("console", (msg) => {
      if (/Content Security Policy|Refused to/i.test(msg.text())) cspViolations.push(msg.text());
    });
    await visitor.goto(`${shopUrl}/`);
    await visitor.getByRole("button", { name: "Chat with Example Shop" }).click();
    await visitor.getByText("online").waitFor();
    await visitor.getByLabel("Your message").fill("Hello, I need help with order 1042.");
    await visitor.getByRole("button", { name: "Send" }).click();
    await visitor.locator('[data-author="visitor"]', { hasText: "order 1042" }).waitFor();
    expect(await visitor.getByLabel("Your message").inputValue()).toBe("");
    expect(sessionCalls).toHaveLength(1);
    expect(sessionCalls[0]!.visitor_id).toMatch(/^v_[0-9a-f]{24}$/);
    for (const r of visitorRequests) {
      expect(JSON.stringify(r.headers)).not.toContain(apiKey);
      expect(r.headers["x-api-key"]).toBeUndefined();
    }
    expect(visitorRequests.some((r) => r.url.startsWith(`${stack.edgeUrl}/v1/apps/bot/widget/messages`))).toBe(true);
    expect(await visitor.content()).not.toContain(apiKey);
  });

  it("the message arrives in the console inbox without a reload; the customer replies and the visitor sees it", async () => {
    const item = agent.getByTestId("inbox-item").filter({ hasText: "Ada Visitor" });
    await item.waitFor({ timeout: 20_000 });
    await expect.poll(() => item.locator(".unread").textContent(), { timeout: 10_000 }).toBe("1");
    // Newest activity first.
    expect(await agent.getByTestId("inbox-item").first().textContent()).toContain("Ada Visitor");
    await item.click();
    await agent.locator('.message[data-author="visitor"]', { hasText: "order 1042" }).waitFor();
    await expect.poll(() => item.locator(".unread").count()).toBe(0);
    await agent.getByLabel("Reply", { exact: true }).fill("Thanks Ada, order 1042 ships today.");
    await agent.getByRole("button", { name: "Send reply" }).click();
    await agent.locator('.message[data-author="bot"]', { hasText: "ships today" }).waitFor();
    await screenshot(agent, "inbox");

    await visitor.locator('[data-author="bot"]', { hasText: "ships today" }).waitFor({ timeout: 15_000 });
    // A second visitor message shows in the open thread as it arrives.
    await visitor.getByLabel("Your message").fill("Great, thank you!");
    await visitor.getByRole("button", { name: "Send" }).click();
    await agent.locator('.message[data-author="visitor"]', { hasText: "Great, thank you!" }).waitFor({ timeout: 15_000 });
    await screenshot(visitor, "widget");
  });

  it("the widget survives a reload (same chat, no new session from the page's server) and refreshes its short-lived token", async () => {
    const refreshesBefore = visitorRequests.filter((r) => r.url.endsWith("/v1/apps/bot/widget/refresh")).length;
    await visitor.reload();
    // The panel stays open across the reload; the history is back.
    await visitor.locator('[data-author="bot"]', { hasText: "ships today" }).waitFor();
    await visitor.locator('[data-author="visitor"]', { hasText: "Great, thank you!" }).waitFor();
    expect(sessionCalls).toHaveLength(1);
    const refreshes = () => visitorRequests.filter((r) => r.url.endsWith("/v1/apps/bot/widget/refresh")).length;
    expect(refreshes()).toBe(refreshesBefore + 1);
    // Tokens live 30 s here; the widget renews at half of that, before any call is refused.
    await expect.poll(refreshes, { timeout: 30_000, interval: 1000 }).toBeGreaterThanOrEqual(refreshesBefore + 2);
    await visitor.getByLabel("Your message").fill("Still here after a refresh.");
    await visitor.getByRole("button", { name: "Send" }).click();
    await agent.locator('.message[data-author="visitor"]', { hasText: "Still here after a refresh." }).waitFor({ timeout: 15_000 });
    expect(sessionCalls).toHaveLength(1);
    expect(cspViolations).toEqual([]);
  });

  it("a SocialOps thread shows its replies' delivery states: queued, delivered, failed with the reason", async () => {
    await agent.getByLabel("Instance").selectOption("socialops:support");
    await expect.poll(() => agent.getByTestId("inbox-item").count()).toBe(1);
    await agent.getByTestId("inbox-item").filter({ hasText: "Where is my parcel?" }).click();
    await agent.locator('.message[data-direction="inbound"]', { hasText: "due yesterday" }).waitFor();
    await agent.getByLabel("Reply", { exact: true }).fill("It left our warehouse this morning.");
    await agent.getByRole("button", { name: "Send reply" }).click();
    await agent.getByText("Reply queued").waitFor();
    const delivered = agent.locator('.message[data-direction="outbound"]', { hasText: "warehouse" });
    await expect.poll(() => delivered.locator(".badge").textContent(), { timeout: 15_000 }).toBe("delivered");
    await agent.getByLabel("Reply", { exact: true }).fill("This one cannot be delivered.");
    await agent.getByRole("button", { name: "Send reply" }).click();
    const failed = agent.locator('.message[data-direction="outbound"]', { hasText: "cannot be delivered" });
    await expect.poll(() => failed.locator(".badge").textContent(), { timeout: 20_000 }).toBe("failed");
    expect(await failed.locator(".bad").textContent()).toMatch(/\S/);
    const replies = receiver.received.filter((r) => r.body.includes("warehouse"));
    expect(replies.length).toBe(1);
    await screenshot(agent, "inbox-socialops");

    await agent.getByLabel("Instance").selectOption("conversations");
    await agent.getByTestId("inbox-item").filter({ hasText: "Invoice address change" }).click();
    await agent.getByText("Linus (CRM) (external, member)", { exact: false }).waitFor();
    await agent.getByLabel("State").selectOption("closed");
    await expect.poll(() => agent.getByTestId("inbox-item").count()).toBe(0);
  });

  it("the push page lists targets, sends test messages with each outcome per target, and shows the delivery log", async () => {
    await visitor.context().close();
    await agent.context().close();
    const page = await openPage(browser, pageErrors);
    await page.goto(`${stack.edgeUrl}/app/`);
    await page.getByLabel("Email", { exact: true }).fill(tenant.email);
    await page.getByLabel("Password", { exact: true }).fill(tenant.password);
    await page.getByRole("button", { name: "Sign in" }).last().click();
    await page.locator("main h1", { hasText: "Overview" }).waitFor();
    await page.goto(`${stack.edgeUrl}/app/#/push`);
    await page.getByLabel("Push instance").selectOption("alerts");
    await page.locator("td code", { hasText: "bad-hook" }).waitFor();
    expect(await page.locator("tr", { hasText: "tg" }).textContent()).toContain("no (not sent to)");
    expect(await page.locator("tr", { hasText: "ok-hook" }).textContent()).toContain("signed ([redacted])");
    await page.getByLabel("API key", { exact: true }).fill(apiKey);
    await page.getByRole("button", { name: "Use this key" }).click();

    const send = async (expected: RegExp) => {
      await page.getByRole("button", { name: "Send test message" }).click();
      await expect
        .poll(
          () =>
            page
              .getByTestId("push-outcome")
              .textContent()
              .catch(() => ""),
          { timeout: 15_000 },
        )
        .toMatch(expected);
    };
    // No balance yet: 402, nothing sent.
    await send(/^HTTP 402: the balance does not cover it; nothing sent/);
    expect(refusing.received).toHaveLength(0);
    const credit = await call(stack.edgeUrl, "POST", `/ops/ledger/tenants/${tenant.tenantId}/credits`, {
      token: (await call<{ token: string }>(stack.edgeUrl, "POST", "/auth/login", { body: stack.admin })).body.token,
      body: { units: 1000, reason: "push e2e" },
    });
    expect(credit.status).toBe(201);

    await send(/^HTTP 207: delivered to some targets; charged for those only · charged \$0\.0001/);
    const outcome = page.getByTestId("push-outcome");
    expect(await outcome.locator("tr", { hasText: "ok-hook" }).textContent()).toMatch(/delivered\s*200/);
    expect(await outcome.locator("tr", { hasText: "bad-hook" }).textContent()).toMatch(/failed\s*500\s*http_500/);
    expect(await outcome.locator("tr", { hasText: "tg" }).count()).toBe(0);
    const partialId = (await outcome.locator("p code").textContent())!;
    await page.getByRole("button", { name: "Refresh" }).click();
    const logged = page.locator("tr", { hasText: partialId });
    await logged.waitFor();
    expect(await logged.locator(".badge").textContent()).toBe("partial");
    expect(await logged.textContent()).toMatch(/ok-hook \(webhook\): delivered, HTTP 200.*bad-hook \(webhook\): failed, HTTP 500, http_500/);
    await screenshot(page, "push");

    await page.getByLabel("Push instance").selectOption("pager");
    await send(/^HTTP 200: delivered to every enabled target/);
    await page.getByLabel("Push instance").selectOption("legacy");
    await send(/^HTTP 502: no target accepted it; nothing charged/);
    expect(await page.getByTestId("push-outcome").locator("tr", { hasText: "old-hook" }).textContent()).toMatch(/failed\s*500/);

    // The log is the API's: newest first, per target.
    const log = await call<{ data: { id: string; status: string; charged_units: number; deliveries: { target_id: string; ok: boolean | null }[] }[] }>(
      stack.edgeUrl,
      "GET",
      "/console/services/webhook-push/alerts/messages",
      { token: tenant.token },
    );
    expect(log.status).toBe(200);
    expect(log.body.data).toHaveLength(1);
    expect(log.body.data[0]).toMatchObject({
      id: partialId,
      status: "partial",
      charged_units: 1,
      deliveries: [
        { target_id: "ok-hook", ok: true },
        { target_id: "bad-hook", ok: false },
      ],
    });
    const after = await call<{ data: unknown[] }>(stack.edgeUrl, "GET", `/console/services/webhook-push/alerts/messages?before=${partialId}`, {
      token: tenant.token,
    });
    expect(after.body.data).toEqual([]);
    expect((await call(stack.edgeUrl, "GET", "/console/services/webhook-push/alerts/messages?before=push_unknown", { token: tenant.token })).status).toBe(400);
    const other = await newTenant(stack.edgeUrl, "stranger");
    expect((await call(stack.edgeUrl, "GET", "/console/services/webhook-push/alerts/messages", { token: other.token })).status).toBe(404);
    await page.context().close();
  });

  it("the conversations page changes participants and channels, opens a widget session, and registers, replays and revokes a webhook", async () => {
    const page = await openPage(browser, pageErrors);
    await page.goto(`${stack.edgeUrl}/app/`);
    await page.getByLabel("Email", { exact: true }).fill(tenant.email);
    await page.getByLabel("Password", { exact: true }).fill(tenant.password);
    await page.getByRole("button", { name: "Sign in" }).last().click();
    await page.locator("main h1", { hasText: "Overview" }).waitFor();
    await page.goto(`${stack.edgeUrl}/app/#/conversations`);
    await page.getByLabel("API key", { exact: true }).fill(apiKey);
    await page.getByRole("button", { name: "Use this key" }).click();

    // A webhook first, so the changes below are delivered to it.
    const hooksBefore = receiver.received.length;
    await page.getByLabel("Webhook URL", { exact: true }).fill(receiver.url.replace("/hooks/jobs", "/hooks/conversations"));
    await page.getByLabel("Signing secret", { exact: true }).fill("conversation-hook-secret-01");
    await page.getByRole("button", { name: "Register webhook" }).click();
    await page.getByText("Registered. The secret is stored encrypted").waitFor();
    const hookRow = page.locator("tr", { hasText: "/hooks/conversations" });
    await hookRow.waitFor();
    expect(await page.content()).not.toContain("conversation-hook-secret-01");

    await page.locator("tr", { hasText: "Invoice address change" }).getByRole("button", { name: "Open" }).click();
    await page.locator("h2", { hasText: "Conversation: Invoice address change" }).waitFor();
    await page.getByLabel("Kind").selectOption("agent");
    await page.getByLabel("External id", { exact: true }).fill("agent-sam");
    await page.getByLabel("Display name", { exact: true }).fill("Sam Agent");
    await page.getByRole("button", { name: "Add participant" }).click();
    await page.locator("td", { hasText: "Sam Agent" }).waitFor();
    await page.getByLabel("Role of crm-4711").selectOption("observer");
    await page.getByLabel("Channel type").selectOption("external");
    await page.getByLabel("Reference", { exact: true }).fill("crm:ticket:4711");
    await page.getByRole("button", { name: "Attach channel" }).click();
    await page.locator("td code", { hasText: "crm:ticket:4711" }).waitFor();
    // A channel is changed in place (same id, new reference) and removed.
    await page.locator("tr", { hasText: "crm:ticket:4711" }).getByRole("button", { name: "Change" }).click();
    await page.getByLabel("New reference of crm:ticket:4711").fill("crm:ticket:4712");
    await page.getByRole("button", { name: "Save channel" }).click();
    await page.locator("td code", { hasText: "crm:ticket:4712" }).waitFor();
    await page.getByLabel("Reference", { exact: true }).fill("crm:scratch");
    await page.getByRole("button", { name: "Attach channel" }).click();
    await page.locator("td code", { hasText: "crm:scratch" }).waitFor();
    await page.locator("tr", { hasText: "crm:scratch" }).getByRole("button", { name: "Remove" }).click();
    await expect.poll(() => page.locator("td code", { hasText: "crm:scratch" }).count()).toBe(0);
    await page.getByLabel("Visitor id", { exact: true }).fill("walk-in-7");
    await page.getByLabel("Visitor name", { exact: true }).fill("Walk-in Visitor");
    await page.getByRole("button", { name: "Open widget session" }).click();
    await page.getByText(/Session \S+ opened in chat chat_/).waitFor();
    await page.locator("td", { hasText: "Walk-in Visitor" }).first().waitFor();
    const sessionRow = page.locator("tr", { hasText: "Walk-in Visitor" }).filter({ has: page.getByRole("button", { name: "End chat" }) });
    expect(await sessionRow.locator(".badge").textContent()).toBe("live");
    await sessionRow.getByRole("button", { name: "End chat" }).click();
    const endedRow = page.locator("tr", { hasText: "chat_ended" });
    await endedRow.waitFor();
    expect(await endedRow.locator(".badge").textContent()).toBe("ended");
    const sessions = await call<{ data: { visitor_id: string; status: string; ended_reason: string | null }[] }>(
      stack.edgeUrl,
      "GET",
      `/v1/conversations/${conversationId}/widget-sessions`,
      {
        headers: { "x-api-key": apiKey },
      },
    );
    expect(sessions.body.data.map((x) => [x.visitor_id, x.status, x.ended_reason])).toEqual([["walk-in-7", "ended", "chat_ended"]]);
    await page.getByRole("button", { name: "pending" }).click();
    await page.locator(".muted", { hasText: /version \d+/ }).waitFor();
    await page.locator("tr", { hasText: "Sam Agent" }).getByRole("button", { name: "Remove" }).click();
    await expect.poll(() => page.locator("td", { hasText: "Sam Agent" }).count()).toBe(0);

    const conversations = await call<{
      data: {
        subject: string;
        status: string;
        participants: { external_id: string; role: string; kind: string }[];
        channels: { type: string; ref: string }[];
      }[];
    }>(stack.edgeUrl, "GET", "/v1/conversations/inbox", { headers: { "x-api-key": apiKey } });
    const conv = conversations.body.data.find((c) => c.subject === "Invoice address change")!;
    expect(conv.status).toBe("pending");
    expect(conv.participants.map((p) => [p.kind, p.external_id, p.role]).sort()).toEqual([
      ["external", "crm-4711", "observer"],
      ["visitor", "walk-in-7", "member"],
    ]);
    expect(conv.channels.map((c) => c.type).sort()).toEqual(["bot_chat", "external"]);
    expect(conv.channels.find((c) => c.type === "external")?.ref).toBe("crm:ticket:4712");

    // Every change went to the webhook; the deliveries show it, a replay queues them again.
    await expect.poll(() => receiver.received.length - hooksBefore, { timeout: 20_000 }).toBeGreaterThanOrEqual(6);
    await hookRow.getByRole("button", { name: "Deliveries" }).click();
    await page.locator(".subcard td", { hasText: "participant.removed" }).waitFor();
    const refreshDeliveries = () => page.getByRole("button", { name: "refresh", exact: true }).click();
    await expect
      .poll(
        async () => {
          await refreshDeliveries();
          return page.locator(".subcard .badge", { hasText: "delivered" }).count();
        },
        { timeout: 15_000 },
      )
      .toBeGreaterThan(0);
    await hookRow.getByRole("button", { name: "Replay" }).click();
    await page.getByText(/events queued/).waitFor();
    await expect
      .poll(
        async () => {
          await refreshDeliveries();
          return page.locator(".subcard tr", { hasText: /yes/ }).count();
        },
        { timeout: 15_000 },
      )
      .toBeGreaterThan(0);
    await screenshot(page, "conversations");
    await hookRow.getByRole("button", { name: "Revoke" }).click();
    await expect.poll(() => hookRow.locator(".badge").textContent()).toBe("revoked");
    await page.context().close();
  });

  it("raised no script errors in any page", async () => {
    expect(pageErrors).toEqual([]);
  });
});
