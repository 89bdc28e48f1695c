import { createHmac } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startCallbackReceiver, type CallbackReceiver } from "@gateway/testkit";
import type { EventEnvelope } from "@gateway/events";
import { newId } from "@gateway/contract/ids";
import { MAX_DELIVERY_ATTEMPTS } from "@gateway/outbound";
import { createAccountWebhookDispatcher } from "../../account-webhooks/dispatcher.js";
import { contextPerFile } from "../../testing/context-per-file.js";
import { checkBalance } from "../alerts/check-balance.js";
import { getAccountAlerts, putAccountAlerts } from "../alerts/settings.js";
import { createAccountWebhook } from "./create.js";
import { noticeAccountEvents, periodEnd } from "./from-events.js";
import { deleteAccountWebhook, listAccountWebhookDeliveries, listAccountWebhooks, testAccountWebhook } from "./manage.js";

const t = contextPerFile();
let receiver: CallbackReceiver;

beforeAll(async () => {
  receiver = await startCallbackReceiver();
});
afterAll(() => receiver?.close());

const tenant = () => newId("ten");
const dispatcher = () =>
  createAccountWebhookDispatcher({
    prisma: t.ctx.prisma,
    keyring: t.ctx.keyring,
    logger: t.ctx.logger,
    settings: t.ctx.callbacks,
    pollMs: 60_000,
    random: () => 0.5,
  });
const event = (type: string, data: Record<string, unknown>): EventEnvelope =>
  ({ id: newId("evt"), type, source: "test", occurred_at: new Date().toISOString(), data }) as unknown as EventEnvelope;
const deliveries = (tenantId: string) => t.ctx.prisma.accountWebhookDelivery.findMany({ where: { tenantId }, orderBy: { seq: "asc" } });

describe("registering account webhooks", () => {
  it("answers the secret once, lists without it, pages newest first and deletes", async () => {
    const tenantId = tenant();
    const made = [];
    for (let i = 0; i < 3; i++) made.push(await createAccountWebhook({ ctx: t.ctx, input: { tenant_id: tenantId, url: receiver.url, events: ["ping"] } }));
    expect(made[0]!.secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(made[0]!.webhook.secretCiphertext).not.toContain(made[0]!.secret);
    const first = await listAccountWebhooks({ ctx: t.ctx, input: { tenant_id: tenantId, limit: 2 } });
    expect(first.items.map((w) => w.id)).toEqual([made[2]!.webhook.id, made[1]!.webhook.id]);
    const second = await listAccountWebhooks({ ctx: t.ctx, input: { tenant_id: tenantId, limit: 2, cursor: first.nextCursor } });
    expect(second).toMatchObject({ items: [{ id: made[0]!.webhook.id }], nextCursor: "" });
    await deleteAccountWebhook({ ctx: t.ctx, input: { tenant_id: tenantId, id: made[1]!.webhook.id } });
    await expect(deleteAccountWebhook({ ctx: t.ctx, input: { tenant_id: tenantId, id: made[1]!.webhook.id } })).rejects.toMatchObject({ code: "not_found" });
    await expect(deleteAccountWebhook({ ctx: t.ctx, input: { tenant_id: tenant(), id: made[0]!.webhook.id } })).rejects.toMatchObject({ code: "not_found" });
    expect((await listAccountWebhooks({ ctx: t.ctx, input: { tenant_id: tenantId } })).items).toHaveLength(2);
    expect((await t.outbox()).filter((e) => e.type.startsWith("account.webhook_")).length).toBeGreaterThanOrEqual(4);
  });

  it("refuses private targets, plain http and unknown events", async () => {
    const strict = { ...t.ctx, callbacks: { ...t.ctx.callbacks, allowHttpLoopback: false } };
    const input = (url: string, events = ["ping"]) => ({ ctx: strict, input: { tenant_id: tenant(), url, events } });
    for (const url of ["https://10.1.2.3/hook", "https://169.254.169.254/latest", "https://[fd00::1]/x", "https://127.0.0.1/x", "https://localhost/x"]) {
      await expect(createAccountWebhook(input(url))).rejects.toMatchObject({
        code: "invalid_request",
        message: expect.stringMatching(/private, loopback or link-local/),
      });
    }
    await expect(createAccountWebhook(input("http://example.com/x"))).rejects.toMatchObject({
      code: "invalid_request",
      message: expect.stringMatching(/HTTPS/),
    });
    await expect(createAccountWebhook(input("https://user:pw@example.com/x"))).rejects.toMatchObject({ code: "invalid_request" });
    await expect(createAccountWebhook(input("https://example.com/x", ["job.updated"]))).rejects.toMatchObject({ code: "invalid_request" });
    await expect(createAccountWebhook(input("https://example.com/x", []))).rejects.toMatchObject({ code: "invalid_request" });
    await expect(createAccountWebhook(input("https://example.com/x", ["ping", "ping"]))).rejects.toMatchObject({ code: "invalid_request" });
  });
});

describe("delivering account events", () => {
  it("sends the signed ping, with its event id, to that webhook only", async () => {
    receiver.respond = () => 200;
    receiver.received.length = 0;
    const tenantId = tenant();
    const { webhook, secret } = await createAccountWebhook({ ctx: t.ctx, input: { tenant_id: tenantId, url: receiver.url, events: ["balance.low"] } });
    await createAccountWebhook({ ctx: t.ctx, input: { tenant_id: tenantId, url: receiver.url, events: ["ping"] } });
    const eventId = await testAccountWebhook({ ctx: t.ctx, input: { tenant_id: tenantId, id: webhook.id } });
    expect(await dispatcher().runOnce()).toBe(1);
    const [got] = receiver.received;
    expect(got!.headers["x-service-event-id"]).toBe(eventId);
    expect(got!.headers["x-service-signature"]).toBe(`sha256=${createHmac("sha256", secret).update(got!.body).digest("hex")}`);
    expect(JSON.parse(got!.body)).toMatchObject({ event: "ping", event_id: eventId, data: { webhook_id: webhook.id }, sent_at: expect.any(String) });
    const page = await listAccountWebhookDeliveries({ ctx: t.ctx, input: { tenant_id: tenantId, webhook_id: webhook.id } });
    expect(page.items).toMatchObject([{ eventId, event: "ping", state: "delivered", attempts: 1, lastStatus: 200 }]);
  });

  it("retries with backoff and gives up after 8 attempts", async () => {
    receiver.respond = () => 503;
    const tenantId = tenant();
    const { webhook } = await createAccountWebhook({ ctx: t.ctx, input: { tenant_id: tenantId, url: receiver.url, events: ["ping"] } });
    await testAccountWebhook({ ctx: t.ctx, input: { tenant_id: tenantId, id: webhook.id } });
    const d = dispatcher();
    for (let attempt = 1; attempt <= MAX_DELIVERY_ATTEMPTS; attempt++) {
      await t.ctx.prisma.accountWebhookDelivery.updateMany({ where: { tenantId }, data: { nextAttemptAt: new Date(Date.now() - 1) } });
      const before = Date.now();
      expect(await d.runOnce()).toBe(1);
      const [row] = await deliveries(tenantId);
      expect(row).toMatchObject({ attempts: attempt, lastStatus: 503, state: attempt < MAX_DELIVERY_ATTEMPTS ? "pending" : "exhausted" });
      if (attempt < MAX_DELIVERY_ATTEMPTS) expect(row!.nextAttemptAt.getTime() - before).toBeGreaterThanOrEqual(1_000 * 2 ** (attempt - 1) - 50);
    }
    await t.ctx.prisma.accountWebhookDelivery.updateMany({ where: { tenantId }, data: { nextAttemptAt: new Date(Date.now() - 1) } });
    expect(await d.runOnce()).toBe(0);
  });

  it("queues budget crossings and key expiry notices from the trail to subscribed webhooks, once", async () => {
    const tenantId = tenant();
    const budgets = await createAccountWebhook({
      ctx: t.ctx,
      input: { tenant_id: tenantId, url: receiver.url, events: ["budget.threshold", "budget.reached"] },
    });
    const keys = await createAccountWebhook({ ctx: t.ctx, input: { tenant_id: tenantId, url: receiver.url, events: ["key.expiring", "budget.reached"] } });
    const threshold = event("budget.threshold", {
      tenant_id: tenantId,
      scope: "key",
      scope_id: "key_1",
      period: "month",
      period_start: "2026-11-01T00:00:00.000Z",
      limit_units: "1000",
      spent_units: "800",
    });
    const reached = event("budget.reached", { ...threshold.data, period: "day", period_start: "2026-11-27T00:00:00.000Z", spent_units: "1000" });
    const expiring = event("key.expiring", { tenant_id: tenantId, key_id: "key_1", prefix: "gw_ab", expires_at: "2026-12-01T00:00:00.000Z", days_left: 7 });
    const other = event("key.expiring", { tenant_id: tenant(), key_id: "key_2", prefix: "gw_cd", expires_at: "2026-12-01T00:00:00.000Z", days_left: 7 });
    const batch = [threshold, reached, expiring, other, event("key.created", { tenant_id: tenantId })];
    expect(await noticeAccountEvents({ tx: t.ctx.prisma, events: batch })).toEqual({ queued: 4, checks: 0 });
    expect(await noticeAccountEvents({ tx: t.ctx.prisma, events: batch })).toEqual({ queued: 0, checks: 0 });
    const rows = await deliveries(tenantId);
    const of = (webhookId: string, type: string) => rows.find((r) => r.webhookId === webhookId && r.event === type);
    expect(rows).toHaveLength(4);
    expect(of(budgets.webhook.id, "budget.threshold")).toMatchObject({ eventId: threshold.id });
    expect(of(budgets.webhook.id, "budget.reached")).toMatchObject({ eventId: reached.id });
    expect(of(keys.webhook.id, "budget.reached")).toMatchObject({ eventId: reached.id });
    expect(of(keys.webhook.id, "key.expiring")).toMatchObject({ eventId: expiring.id });
    expect(of(budgets.webhook.id, "budget.threshold")!.data).toEqual({
      scope: "key",
      id: "key_1",
      limit_units: 1000,
      spent_units: 800,
      period: "month",
      resets_at: "2026-12-01T00:00:00.000Z",
    });
    expect(of(keys.webhook.id, "budget.reached")!.data).toMatchObject({ period: "day", resets_at: "2026-11-28T00:00:00.000Z", spent_units: 1000 });
    expect(of(keys.webhook.id, "key.expiring")!.data).toEqual({ key_id: "key_1", prefix: "gw_ab", expires_at: "2026-12-01T00:00:00.000Z" });
    expect(periodEnd("2026-12-01T00:00:00.000Z", "month")).toBe("2027-01-01T00:00:00.000Z");
  });
});

describe("the balance alert", () => {
  it("fires once per crossing, re-arms at or above the threshold, and only for tenants with a threshold", async () => {
    const tenantId = tenant();
    await createAccountWebhook({ ctx: t.ctx, input: { tenant_id: tenantId, url: receiver.url, events: ["balance.low"] } });
    t.ledger.credit(tenantId, 10_000n);
    const moved = () => noticeAccountEvents({ tx: t.ctx.prisma, events: [event("ledger.posted", { tenant_id: tenantId })] });
    expect(await moved()).toEqual({ queued: 0, checks: 0 }); // no threshold: nothing to check
    expect(await getAccountAlerts({ ctx: t.ctx, input: { tenant_id: tenantId } })).toEqual({ balanceLowUnits: null });
    await putAccountAlerts({ ctx: t.ctx, input: { tenant_id: tenantId, balance_low_units: 5_000 } });
    expect(await getAccountAlerts({ ctx: t.ctx, input: { tenant_id: tenantId } })).toEqual({ balanceLowUnits: 5_000n });
    const check = () => checkBalance({ ctx: t.ctx, input: { tenantId } });
    expect(await check()).toBe("above");
    expect(await check()).toBe("skipped"); // nothing new since
    const spend = async (units: bigint) => {
      t.ledger.available.set(tenantId, t.ledger.available.get(tenantId)! - units);
      expect(await moved()).toEqual({ queued: 0, checks: 1 });
      return check();
    };
    expect(await spend(4_000n)).toBe("above"); // 6000
    expect(await spend(1_000n)).toBe("above"); // 5000: at the threshold is not below
    expect(await spend(1n)).toBe("crossed"); // 4999
    expect(await spend(1_000n)).toBe("below"); // no second event
    t.ledger.credit(tenantId, 2_000n); // 5999: re-armed
    expect(await moved()).toEqual({ queued: 0, checks: 1 });
    expect(await check()).toBe("above");
    expect(await spend(2_000n)).toBe("crossed"); // 3999
    const sent = (await deliveries(tenantId)).filter((d) => d.event === "balance.low");
    expect(sent.map((d) => d.data)).toEqual([
      { available_units: 4_999, threshold_units: 5_000 },
      { available_units: 3_999, threshold_units: 5_000 },
    ]);
    expect((await t.outbox()).filter((e) => e.type === "account.balance_low" && e.payload.tenant_id === tenantId)).toHaveLength(2);
  });

  it("sends at once when a new threshold is already above the balance; null turns it off", async () => {
    const tenantId = tenant();
    await createAccountWebhook({ ctx: t.ctx, input: { tenant_id: tenantId, url: receiver.url, events: ["balance.low"] } });
    t.ledger.credit(tenantId, 100n);
    await putAccountAlerts({ ctx: t.ctx, input: { tenant_id: tenantId, balance_low_units: 1_000 } });
    expect(await checkBalance({ ctx: t.ctx, input: { tenantId } })).toBe("crossed");
    await putAccountAlerts({ ctx: t.ctx, input: { tenant_id: tenantId, balance_low_units: null } });
    expect(await checkBalance({ ctx: t.ctx, input: { tenantId } })).toBe("above");
    expect(await getAccountAlerts({ ctx: t.ctx, input: { tenant_id: tenantId } })).toEqual({ balanceLowUnits: null });
    await putAccountAlerts({ ctx: t.ctx, input: { tenant_id: tenantId, balance_low_units: 1_000 } });
    expect(await checkBalance({ ctx: t.ctx, input: { tenantId } })).toBe("crossed");
    expect((await deliveries(tenantId)).filter((d) => d.event === "balance.low")).toHaveLength(2);
  });

  it("sees one crossing when replicas check the same tenant at once", async () => {
    const tenantId = tenant();
    await createAccountWebhook({ ctx: t.ctx, input: { tenant_id: tenantId, url: receiver.url, events: ["balance.low"] } });
    t.ledger.credit(tenantId, 10n);
    await putAccountAlerts({ ctx: t.ctx, input: { tenant_id: tenantId, balance_low_units: 1_000 } });
    const outcomes = await Promise.all(Array.from({ length: 6 }, () => checkBalance({ ctx: t.ctx, input: { tenantId } })));
    expect(outcomes.filter((o) => o === "crossed")).toHaveLength(1);
    expect((await deliveries(tenantId)).filter((d) => d.event === "balance.low")).toHaveLength(1);
  });
});
