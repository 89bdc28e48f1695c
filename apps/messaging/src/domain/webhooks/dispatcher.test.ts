import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { verifySignature } from "@gateway/outbound";
import { createLogger } from "@gateway/logger";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestHub, type TestHub } from "../../testing/hub.js";
import { createConversation } from "../conversations/create.js";
import { createWebhookDispatcher } from "./dispatcher.js";
import { openWebhookSecret, registerWebhook, replayWebhook, revokeWebhook } from "./register.js";

let hub: TestHub;
let server: Server;
let base: string;
const hits: { path: string; raw: string; signature: string | undefined; eventId: string | undefined }[] = [];
let failing = new Set<string>();

beforeAll(async () => {
  hub = await createTestHub();
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const path = req.url ?? "/";
      hits.push({
        path,
        raw: Buffer.concat(chunks).toString(),
        signature: req.headers["x-service-signature"] as string,
        eventId: req.headers["x-service-event-id"] as string,
      });
      res.writeHead(failing.has(path) ? 503 : 200).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server?.close();
  await hub?.close();
});

function dispatcher() {
  return createWebhookDispatcher({
    ctx: hub.ctx,
    logger: createLogger({ service: "messaging", level: "silent" }),
    policy: { allowPrivate: true, allowHttpLoopback: true },
    baseDelayMs: 1,
    timeoutMs: 2_000,
    pollMs: 10,
    random: () => 0.5,
  });
}

async function until<T>(fn: () => Promise<T | undefined>, timeoutMs = 15_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe("conversation webhooks", () => {
  it("seal the secret bound to the webhook; a blob moved to another webhook does not open", async () => {
    const secret = "sealed-secret-0123456789";
    const a = await registerWebhook({ ctx: hub.ctx, input: { tenantId: "ten_s", url: `${base}/a`, secret, eventTypes: [] } });
    const b = await registerWebhook({ ctx: hub.ctx, input: { tenantId: "ten_s", url: `${base}/b`, secret: "another-secret-0123456789", eventTypes: [] } });
    expect(Buffer.from(a.secretCiphertext).toString("latin1")).not.toContain(secret);
    expect(openWebhookSecret(hub.ctx, a)).toBe(secret);
    expect(() => openWebhookSecret(hub.ctx, { ...b, secretCiphertext: a.secretCiphertext })).toThrow();
    await revokeWebhook({ ctx: hub.ctx, input: { tenantId: "ten_s", id: a.id } });
    await revokeWebhook({ ctx: hub.ctx, input: { tenantId: "ten_s", id: b.id } });
  });

  it("deliver signed bodies; failures back off and end exhausted after 8 attempts; replays keep event ids", async () => {
    const secret = "dispatch-secret-0123456789";
    const ok = await registerWebhook({ ctx: hub.ctx, input: { tenantId: "ten_d", url: `${base}/ok`, secret, eventTypes: ["conversation.created"] } });
    const down = await registerWebhook({ ctx: hub.ctx, input: { tenantId: "ten_d", url: `${base}/down`, secret, eventTypes: [] } });
    failing = new Set(["/down"]);
    const d = dispatcher();
    d.start();
    try {
      const c = await createConversation({
        ctx: hub.ctx,
        input: { tenantId: "ten_d", subject: "s", metadataJson: "", participants: [{ kind: "agent", external_id: "a", display_name: "", role: "" }] },
      });
      d.kick();
      const delivered = await until(async () => {
        const row = await hub.ctx.prisma.webhookDelivery.findFirst({ where: { webhookId: ok.id, state: "delivered" } });
        return row ?? undefined;
      });
      expect(delivered.attempts).toBe(1);
      const hit = hits.find((h) => h.path === "/ok")!;
      expect(verifySignature(secret, hit.raw, hit.signature)).toBe(true);
      expect(verifySignature("wrong-secret-0123456789", hit.raw, hit.signature)).toBe(false);
      const body = JSON.parse(hit.raw) as { event: string; event_id: string; conversation_id: string };
      expect(body).toMatchObject({ event: "conversation.created", conversation_id: c.conversation.id });
      expect(hit.eventId).toBe(body.event_id);
      // The filter: the participant event went only to the unfiltered webhook.
      expect(hits.filter((h) => h.path === "/ok")).toHaveLength(1);

      const exhausted = await until(async () => {
        const rows = await hub.ctx.prisma.webhookDelivery.findMany({ where: { webhookId: down.id } });
        return rows.length === 2 && rows.every((r) => r.state === "exhausted") ? rows : undefined;
      });
      expect(exhausted.every((r) => r.attempts === 8 && r.lastStatus === 503)).toBe(true);
      expect(hits.filter((h) => h.path === "/down")).toHaveLength(16);
      const attempts = (await hub.outbox()).filter((e) => e.type === "conversation.webhook_attempted" && e.payload.webhook_id === down.id);
      expect(attempts).toHaveLength(16);
      expect(attempts.filter((e) => e.payload.state === "exhausted")).toHaveLength(2);

      failing = new Set();
      const replay = await replayWebhook({ ctx: hub.ctx, input: { tenantId: "ten_d", id: down.id, cursor: "", limit: 0 } });
      expect(replay).toMatchObject({ queued: 2, fromCursor: "0", nextCursor: "2" });
      d.kick();
      await until(async () =>
        (await hub.ctx.prisma.webhookDelivery.count({ where: { webhookId: down.id, state: "delivered", replay: true } })) === 2 ? true : undefined,
      );
      const ids = new Set(hits.filter((h) => h.path === "/down").map((h) => h.eventId));
      expect(ids.size).toBe(2);
      const onlyLast = await replayWebhook({ ctx: hub.ctx, input: { tenantId: "ten_d", id: down.id, cursor: "1", limit: 0 } });
      expect(onlyLast).toMatchObject({ queued: 1, nextCursor: "2" });
      await expect(replayWebhook({ ctx: hub.ctx, input: { tenantId: "ten_other", id: down.id, cursor: "", limit: 0 } })).rejects.toMatchObject({
        code: "not_found",
      });
    } finally {
      await d.stop();
    }
  });

  it("cancel pending deliveries when the webhook is revoked", async () => {
    const w = await registerWebhook({ ctx: hub.ctx, input: { tenantId: "ten_r", url: `${base}/never`, secret: "revoked-secret-0123456789", eventTypes: [] } });
    await createConversation({ ctx: hub.ctx, input: { tenantId: "ten_r", subject: "", metadataJson: "", participants: [] } });
    expect(await hub.ctx.prisma.webhookDelivery.count({ where: { webhookId: w.id, state: "pending" } })).toBe(1);
    await revokeWebhook({ ctx: hub.ctx, input: { tenantId: "ten_r", id: w.id } });
    expect(await hub.ctx.prisma.webhookDelivery.count({ where: { webhookId: w.id, state: "canceled" } })).toBe(1);
    await expect(replayWebhook({ ctx: hub.ctx, input: { tenantId: "ten_r", id: w.id, cursor: "", limit: 0 } })).rejects.toMatchObject({ code: "conflict" });
  });
});
