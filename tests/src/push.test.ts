import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createClient, type Client } from "@gateway/grpc-kit";
import { ledgerV1 } from "@gateway/protos";
import { call, newTenant, signIn, startStack, type Stack } from "@gateway/testkit";
import { eventually } from "./support/operators.js";
import { MockBotApi, WebhookReceiver } from "./support/receivers.js";

// Stack tests of push (CONTRACT.md section 8, decision 0110): a local webhook
// receiver that verifies signatures and a mock bot API stand in for the targets.

const PRICE = 3;
const SECRET_A = "whsec-target-a-0123456789";
const BOT_TOKEN = "123456:bot-token-secret-ABCdef";

let stack: Stack;
let hooks: WebhookReceiver;
let bot: MockBotApi;
let ledger: Client<typeof ledgerV1>;
let adminToken: string;

type Tenant = Awaited<ReturnType<typeof newTenant>>;

beforeAll(async () => {
  hooks = await new WebhookReceiver().start();
  bot = await new MockBotApi().start();
  stack = await startStack({
    services: ["ledger", "managed-ai", "messaging"],
    env: {
      messaging: {
        ALLOW_PRIVATE_TARGETS: "true",
        TELEGRAM_API_BASE: bot.url,
        PUSH_PRICE_UNITS: String(PRICE),
        PUSH_TARGET_TIMEOUT_MS: "3000",
        PUSH_RECOVERY_AFTER_MS: "6000",
        PUSH_RECOVERY_INTERVAL_MS: "300",
      },
    },
  });
  ledger = createClient(ledgerV1, stack.address("ledger"), { deadlineMs: 5_000, serviceToken: stack.serviceToken, tls: stack.tls });
  adminToken = await signIn(stack.edgeUrl, stack.admin.email, stack.admin.password);
});
afterAll(async () => {
  ledger?.close();
  await stack?.shutdown();
  await hooks?.close();
  await bot?.close();
});
beforeEach(() => {
  hooks.reset();
  bot.reset();
  hooks.secret("/a", SECRET_A);
  bot.on(`/bot${BOT_TOKEN}/sendMessage`, { body: JSON.stringify({ ok: true, result: { message_id: 7 } }) });
});

async function tenantWith(units: number): Promise<Tenant> {
  const t = await newTenant(stack.edgeUrl, "push");
  if (units > 0) {
    const res = await call(stack.edgeUrl, "POST", `/ops/ledger/tenants/${t.tenantId}/credits`, { token: adminToken, body: { units, reason: "push tests" } });
    expect(res.status).toBe(201);
  }
  return t;
}

function targets(overrides: Record<string, unknown> = {}) {
  return [
    { id: "a", type: "webhook", url: `${hooks.url}/a`, secret: SECRET_A, enabled: true },
    { id: "b", type: "webhook", url: `${hooks.url}/b`, enabled: true },
    { id: "tg", type: "telegram", bot_token: BOT_TOKEN, chat_id: "42", enabled: true },
    { id: "off", type: "webhook", url: `${hooks.url}/off`, enabled: false },
    ...(overrides.extra ? [overrides.extra] : []),
  ];
}

async function instance(t: Tenant, alias: string, list: unknown[] = targets(), status = "active") {
  return call(stack.edgeUrl, "POST", "/console/services", { token: t.token, body: { service_id: "webhook-push", alias, status, config: { targets: list } } });
}

async function key(t: Tenant, policy: Record<string, unknown> = {}) {
  const res = await call(stack.edgeUrl, "POST", "/console/keys", { token: t.token, body: { name: "push", scopes: ["push:send"], ...policy } });
  expect(res.status).toBe(201);
  return res.body.data.key as string;
}

function send(k: string, alias: string, body: unknown = { title: "Deploy", text: "v2 is live" }) {
  return call(stack.edgeUrl, "POST", `/v1/apps/webhook-push/${alias}/send`, { headers: { "X-API-Key": k }, body });
}

async function balanceOf(tenantId: string) {
  const b = await ledger.GetBalance({ tenant_id: tenantId });
  return { available: Number(b.available_units), reserved: Number(b.reserved_units) };
}

async function expectInvariant(tenantId: string) {
  const check = await ledger.CheckInvariant({ tenant_id: tenantId });
  expect(check.ok).toBe(true);
  return check.tenants[0]!;
}

async function captures(tenantId: string) {
  const entries = await ledger.ListEntries({ tenant_id: tenantId, limit: 200, cursor: "" });
  return entries.entries.filter((e) => e.kind === "capture").map((e) => ({ op: e.operation_id, units: Number(e.units) }));
}

describe("push instances", () => {
  it("are created and updated through /console/services, listed with every other instance, secrets redacted and sealed at rest", async () => {
    const t = await tenantWith(0);
    const created = await instance(t, "alerts");
    expect(created.status).toBe(201);
    expect(created.body.data).toMatchObject({ service_id: "webhook-push", alias: "alerts", status: "active", version: 1 });
    expect(created.body.data.config.targets).toEqual([
      { id: "a", type: "webhook", url: `${hooks.url}/a`, secret: "[redacted]", enabled: true },
      { id: "b", type: "webhook", url: `${hooks.url}/b`, secret: null, enabled: true },
      { id: "tg", type: "telegram", bot_token: "[redacted]", connected_account_id: null, chat_id: "42", enabled: true },
      { id: "off", type: "webhook", url: `${hooks.url}/off`, secret: null, enabled: false },
    ]);

    // An update without the secrets keeps them; the version moves.
    const updated = await instance(t, "alerts", [
      { id: "a", type: "webhook", url: `${hooks.url}/a`, enabled: true },
      { id: "tg", type: "telegram", chat_id: 42, enabled: false },
    ]);
    expect(updated.status).toBe(201);
    expect(updated.body.data.version).toBe(2);
    expect(updated.body.data.id).toBe(created.body.data.id);
    expect(updated.body.data.config.targets[0].secret).toBe("[redacted]");
    expect(updated.body.data.config.targets[1].bot_token).toBe("[redacted]");

    await call(stack.edgeUrl, "POST", "/console/services", { token: t.token, body: { service_id: "socialops", alias: "inbox", status: "active", config: {} } });
    const listed = await call(stack.edgeUrl, "GET", "/console/services", { token: t.token });
    expect(listed.status).toBe(200);
    expect(listed.body.data.map((i: any) => `${i.service_id}:${i.alias}`)).toEqual(["socialops:inbox", "webhook-push:alerts"]);
    const text = JSON.stringify(listed.body);
    expect(text).not.toContain(SECRET_A);
    expect(text).not.toContain(BOT_TOKEN);
    const stored = JSON.stringify(await stack.sql("messaging", "SELECT config FROM app_instances"));
    expect(stored).not.toContain(SECRET_A);
    expect(stored).not.toContain(BOT_TOKEN.split(":")[1]);
    expect(stack.logs("messaging").some((l) => JSON.stringify(l).includes(SECRET_A) || JSON.stringify(l).includes(BOT_TOKEN))).toBe(false);
    expect(stack.logs("edge").some((l) => JSON.stringify(l).includes(SECRET_A) || JSON.stringify(l).includes(BOT_TOKEN))).toBe(false);

    // Another tenant sees none of them.
    const other = await tenantWith(0);
    expect((await call(stack.edgeUrl, "GET", "/console/services", { token: other.token })).body.data).toEqual([]);
  });

  it("refuses bad configs with a 4xx", async () => {
    const t = await tenantWith(0);
    const bad = [
      [{ id: "x", type: "webhook", url: "ftp://example.com/x" }],
      [{ id: "x", type: "telegram", chat_id: "1" }],
      [{ id: "x", type: "telegram", chat_id: "1", bot_token: "1:a", connected_account_id: "ca_1" }],
      [
        { id: "x", type: "webhook", url: `${hooks.url}/x` },
        { id: "x", type: "webhook", url: `${hooks.url}/y` },
      ],
      [{ id: "x", type: "pager", url: `${hooks.url}/x` }],
    ];
    for (const list of bad) {
      const res = await instance(t, "bad", list);
      expect(res.status, JSON.stringify(list)).toBe(400);
      expect(res.body.error).toBe("invalid_request");
    }
    expect(
      (await call(stack.edgeUrl, "POST", "/console/services", { token: t.token, body: { service_id: "sms", alias: "x", status: "active", config: {} } }))
        .status,
    ).toBe(400);
  });
});

describe("sending", () => {
  it("200: every enabled target gets the message (signed webhook, bot API), disabled ones nothing; charged per target, exactly", async () => {
    const t = await tenantWith(1_000);
    expect((await instance(t, "all")).status).toBe(201);
    const k = await key(t);
    const res = await send(k, "all");
    expect(res.status).toBe(200);
    const { message_id, results, charged_units } = res.body.data;
    expect(message_id).toMatch(/^push_/);
    expect(charged_units).toBe(3 * PRICE);
    expect(results).toEqual([
      { target_id: "a", ok: true, status: 200, error: null },
      { target_id: "b", ok: true, status: 200, error: null },
      { target_id: "tg", ok: true, status: 200, error: null },
    ]);

    const [a] = hooks.at("/a");
    expect(a!.signatureValid).toBe(true);
    expect(a!.headers["x-service-event-id"]).toBe(message_id);
    expect(a!.json).toMatchObject({ message_id, title: "Deploy", text: "v2 is live" });
    expect(new Date(a!.json.sent_at).toISOString()).toBe(a!.json.sent_at);
    const [b] = hooks.at("/b");
    expect(b!.headers["x-service-signature"]).toBeUndefined();
    expect(b!.body).toBe(a!.body);
    expect(hooks.at("/off")).toEqual([]);
    expect(bot.messagesFor(BOT_TOKEN)).toEqual([{ chat_id: "42", text: "Deploy\n\nv2 is live" }]);

    expect(await balanceOf(t.tenantId)).toEqual({ available: 1_000 - 3 * PRICE, reserved: 0 });
    expect(await expectInvariant(t.tenantId)).toMatchObject({ credits: "1000", captured: String(3 * PRICE) });
    expect(await captures(t.tenantId)).toEqual([{ op: `capture:${message_id}`, units: 3 * PRICE }]);
    const [row] = await stack.sql("messaging", "SELECT status, charged_units, recovered FROM push_messages WHERE id = $1", [message_id]);
    expect(row).toEqual({ status: "delivered", charged_units: String(3 * PRICE), recovered: false });
  });

  it("207: some targets fail or time out; only the delivered ones are charged", async () => {
    const t = await tenantWith(1_000);
    await instance(t, "some");
    const k = await key(t);
    hooks.on("/b", { status: 500 });
    const first = await send(k, "some");
    expect(first.status).toBe(207);
    expect(first.body.data.results).toEqual([
      { target_id: "a", ok: true, status: 200, error: null },
      { target_id: "b", ok: false, status: 500, error: "http_500" },
      { target_id: "tg", ok: true, status: 200, error: null },
    ]);
    expect(first.body.data.charged_units).toBe(2 * PRICE);

    // A target that answers after its own timeout does not hold up the others, and is not charged.
    hooks.on("/b", { delayMs: 6_000 });
    const second = await send(k, "some");
    expect(second.status).toBe(207);
    expect(second.body.data.results[1]).toEqual({ target_id: "b", ok: false, status: null, error: "timeout" });
    expect(second.body.data.charged_units).toBe(2 * PRICE);

    expect(await balanceOf(t.tenantId)).toEqual({ available: 1_000 - 4 * PRICE, reserved: 0 });
    await expectInvariant(t.tenantId);
  });

  it("502: no target gets it; the error shape carries the results and nothing is charged", async () => {
    const t = await tenantWith(1_000);
    await instance(t, "none");
    const k = await key(t);
    hooks.on("/a", { status: 503 });
    hooks.on("/b", { status: 404 });
    bot.on(`/bot${BOT_TOKEN}/sendMessage`, { status: 401, body: JSON.stringify({ ok: false, description: "Unauthorized" }) });
    const res = await send(k, "none");
    expect(res.status).toBe(502);
    expect(res.body).toMatchObject({ error: "upstream_error", request_id: res.headers.get("x-request-id"), charged_units: 0 });
    expect(res.body.results).toEqual([
      { target_id: "a", ok: false, status: 503, error: "http_503" },
      { target_id: "b", ok: false, status: 404, error: "http_404" },
      { target_id: "tg", ok: false, status: 401, error: "http_401" },
    ]);
    expect(await balanceOf(t.tenantId)).toEqual({ available: 1_000, reserved: 0 });
    expect(await expectInvariant(t.tenantId)).toMatchObject({ captured: "0" });
  });

  it("422 without an enabled target; 402 before anything is sent when the balance is short; 400/403/404 for the rest", async () => {
    const t = await tenantWith(3 * PRICE - 1);
    const k = await key(t);
    await instance(t, "quiet", [{ id: "off", type: "webhook", url: `${hooks.url}/off`, enabled: false }]);
    const quiet = await send(k, "quiet");
    expect(quiet.status).toBe(422);
    expect(quiet.body.error).toBe("validation_failed");

    await instance(t, "poor");
    const poor = await send(k, "poor");
    expect(poor.status).toBe(402);
    expect(poor.body.error).toBe("insufficient_balance");
    expect(hooks.received).toEqual([]);
    expect(bot.received).toEqual([]);
    expect(await balanceOf(t.tenantId)).toEqual({ available: 3 * PRICE - 1, reserved: 0 });
    expect(await stack.sql("messaging", "SELECT id FROM push_messages WHERE tenant_id = $1", [t.tenantId])).toEqual([]);

    await instance(t, "paused", targets(), "disabled");
    expect((await send(k, "paused")).status).toBe(403);
    expect((await send(k, "missing")).status).toBe(404);
    expect((await send(k, "poor", { title: "", text: "x" })).status).toBe(400);
    expect((await send(k, "poor", { title: "x", text: "y".repeat(4097) })).status).toBe(400);
    await expectInvariant(t.tenantId);
  });

  it("needs push:send and the instance among the key's aliases; another tenant's instance does not exist", async () => {
    const t = await tenantWith(1_000);
    await instance(t, "mine");
    const noScope = await call(stack.edgeUrl, "POST", "/console/keys", { token: t.token, body: { name: "ai only", scopes: ["ai:invoke"] } });
    expect((await send(noScope.body.data.key, "mine")).status).toBe(403);
    const otherAlias = await key(t, { service_aliases: ["webhook-push:elsewhere"] });
    expect((await send(otherAlias, "mine")).status).toBe(403);
    const rightAlias = await key(t, { service_aliases: ["webhook-push:mine"] });
    expect((await send(rightAlias, "mine")).status).toBe(200);
    expect((await send("gw_not_a_key", "mine")).status).toBe(401);

    const stranger = await tenantWith(1_000);
    const strangerKey = await key(stranger);
    const res = await send(strangerKey, "mine");
    expect(res.status).toBe(404);
    expect(await balanceOf(stranger.tenantId)).toEqual({ available: 1_000, reserved: 0 });
  });
});

describe("a messaging restart in the middle of a push", () => {
  it("loses nothing: the interrupted message is settled from what was recorded, charged once", async () => {
    const t = await tenantWith(1_000);
    await instance(t, "crash");
    const k = await key(t);
    hooks.on("/a", { hang: true });
    const pending = send(k, "crash");
    // b and the bot have answered and are recorded; a is still in flight.
    const [msg] = await eventually(
      () =>
        stack.sql<{ message_id: string; n: string }>(
          "messaging",
          "SELECT d.message_id, count(*) FILTER (WHERE d.ok IS NOT NULL) AS n FROM push_deliveries d JOIN push_messages m ON m.id = d.message_id WHERE m.tenant_id = $1 GROUP BY d.message_id",
          [t.tenantId],
        ),
      (rows) => rows.length === 1 && rows[0]!.n === "2" && hooks.pendingCount() === 1,
      10_000,
    );
    const messageId = msg!.message_id;
    stack.process("messaging").signal("SIGKILL");
    await stack.process("messaging").waitExit();
    const answer = await pending;
    expect(answer.status).toBeGreaterThanOrEqual(500);
    expect((await balanceOf(t.tenantId)).reserved).toBe(3 * PRICE);
    hooks.release();

    await stack.start("messaging");
    const [row] = await eventually(
      () =>
        stack.sql<{ status: string; charged_units: string; recovered: boolean }>(
          "messaging",
          "SELECT status, charged_units, recovered FROM push_messages WHERE id = $1",
          [messageId],
        ),
      (rows) => rows[0]?.status !== "sending",
      30_000,
    );
    expect(row).toEqual({ status: "partial", charged_units: String(2 * PRICE), recovered: true });
    const deliveries = await stack.sql("messaging", "SELECT target_id, ok, error FROM push_deliveries WHERE message_id = $1 ORDER BY position", [messageId]);
    expect(deliveries).toEqual([
      { target_id: "a", ok: false, error: "interrupted" },
      { target_id: "b", ok: true, error: null },
      { target_id: "tg", ok: true, error: null },
    ]);
    expect(await balanceOf(t.tenantId)).toEqual({ available: 1_000 - 2 * PRICE, reserved: 0 });
    expect(await captures(t.tenantId)).toEqual([{ op: `capture:${messageId}`, units: 2 * PRICE }]);
    await expectInvariant(t.tenantId);

    // The service works on after the restart.
    hooks.on("/a", { status: 200 });
    expect((await send(k, "crash")).status).toBe(200);
  });
});

describe("egress to private addresses", () => {
  it("is refused when ALLOW_PRIVATE_TARGETS is off: at configuration, and at delivery for a name that resolves to loopback", async () => {
    const t = await tenantWith(1_000);
    // Configured while private targets were allowed (local testing) ...
    await instance(t, "local", [
      { id: "name", type: "webhook", url: `${hooks.url.replace("127.0.0.1", "localhost")}/name` },
      { id: "ip", type: "webhook", url: `${hooks.url}/ip` },
    ]);
    const k = await key(t);
    // ... then the service runs with them refused.
    await stack.stop("messaging");
    (stack.process("messaging").env as Record<string, string>).ALLOW_PRIVATE_TARGETS = "false";
    await stack.start("messaging");
    try {
      const res = await send(k, "local");
      expect(res.status).toBe(502);
      expect(res.body.results).toEqual([
        { target_id: "name", ok: false, status: null, error: "private_address" },
        { target_id: "ip", ok: false, status: null, error: "private_address" },
      ]);
      expect(hooks.received).toEqual([]);
      expect(await balanceOf(t.tenantId)).toEqual({ available: 1_000, reserved: 0 });

      for (const url of [
        `${hooks.url}/x`,
        "http://localhost:9/x",
        "http://10.1.2.3/x",
        "http://169.254.169.254/latest/meta-data",
        "http://[::1]:9/x",
        "http://192.168.0.10/x",
      ]) {
        const created = await instance(t, "refused", [{ id: "x", type: "webhook", url }]);
        expect(created.status, url).toBe(422);
        expect(created.body.error).toBe("validation_failed");
      }
      const social = await call(stack.edgeUrl, "POST", "/console/services", {
        token: t.token,
        body: { service_id: "socialops", alias: "s", status: "active", config: { reply_webhook_url: "http://localhost:9/replies" } },
      });
      expect(social.status).toBe(422);
    } finally {
      await stack.stop("messaging");
      (stack.process("messaging").env as Record<string, string>).ALLOW_PRIVATE_TARGETS = "true";
      await stack.start("messaging");
    }
  });
});
