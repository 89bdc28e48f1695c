import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verifySignature } from "@gateway/outbound";
import { createTestContext, type TestContext } from "../../testing/context.js";
import { storeSocialOpsConfig } from "../instances/config.js";
import { deliverSocialReply } from "./deliver-reply.js";
import { ingestSocialEvent } from "./ingest.js";
import { queueSocialReply } from "./reply.js";

let t: TestContext;
let server: Server;
let statuses: number[] = [];
const got: { headers: Record<string, unknown>; body: string }[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => (body += c.toString()));
    req.on("end", () => {
      got.push({ headers: req.headers, body });
      res.writeHead(statuses.shift() ?? 200).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  t = await createTestContext();
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/r`;
  const config = await storeSocialOpsConfig({ reply_webhook_url: url, reply_webhook_secret: "reply-secret" }, null, "inst_r", t.ctx.keyring, t.ctx.egress);
  await t.ctx.prisma.appInstance.create({
    data: { id: "inst_r", tenantId: "ten_1", serviceId: "socialops", alias: "inbox", status: "active", config, version: 1 },
  });
});
afterAll(async () => {
  await t?.close();
  await new Promise<void>((r) => server.close(() => r()));
});

async function queued(text: string) {
  const { threadId } = await ingestSocialEvent({
    ctx: t.ctx,
    input: { tenant_id: "ten_1", alias: "inbox", provider: "generic", event_id: `e-${text}`, thread_id: "T", subject: "s", text: "hi", author: null },
  });
  return queueSocialReply({ ctx: t.ctx, input: { tenant_id: "ten_1", alias: "inbox", thread_id: threadId, text } });
}

describe("delivering a reply", () => {
  it("posts it signed, records it delivered, and does nothing on a redelivery", async () => {
    const reply = await queued("hello");
    expect(await deliverSocialReply({ ctx: t.ctx, input: { message_id: reply.id } })).toEqual({ done: true });
    const last = got.at(-1)!;
    expect(verifySignature("reply-secret", last.body, last.headers["x-service-signature"] as string)).toBe(true);
    expect(last.headers["x-service-event-id"]).toBe(reply.id);
    const row = await t.ctx.prisma.socialMessage.findUniqueOrThrow({ where: { id: reply.id } });
    expect(row).toMatchObject({ deliveryState: "delivered", deliveryAttempts: 1, deliveryLastStatus: 200, deliveryError: null });
    const calls = got.length;
    expect(await deliverSocialReply({ ctx: t.ctx, input: { message_id: reply.id } })).toEqual({ done: true });
    expect(got.length).toBe(calls);
  });

  it("asks for a retry with backoff while attempts remain, then records it failed", async () => {
    const reply = await queued("fails");
    statuses = [500, 500, 500];
    const first = await deliverSocialReply({ ctx: t.ctx, input: { message_id: reply.id } });
    expect(first.done).toBe(false);
    expect(await deliverSocialReply({ ctx: t.ctx, input: { message_id: reply.id } })).toMatchObject({ done: false });
    expect(await deliverSocialReply({ ctx: t.ctx, input: { message_id: reply.id } })).toEqual({ done: true });
    const row = await t.ctx.prisma.socialMessage.findUniqueOrThrow({ where: { id: reply.id } });
    expect(row).toMatchObject({ deliveryState: "failed", deliveryAttempts: 3, deliveryLastStatus: 500, deliveryError: "http_500" });
    expect((await t.outbox("socialops.reply_attempted")).filter((e) => e.payload.message_id === reply.id).map((e) => e.payload.state)).toEqual([
      "retrying",
      "retrying",
      "failed",
    ]);
  });
});
