import { createHmac } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startCallbackReceiver, type CallbackReceiver } from "@gateway/testkit";
import { newId } from "@gateway/contract/ids";
import { contextPerFile } from "../testing/context-per-file.js";
import { MAX_DELIVERY_ATTEMPTS as MAX_ATTEMPTS } from "@gateway/outbound";
import { createCallbackDispatcher } from "./dispatcher.js";
import { sealCallbackSecret, secretColumns } from "./target.js";

const SECRET = "receiver-secret-0123456789";
const t = contextPerFile();
let receiver: CallbackReceiver;

beforeAll(async () => {
  receiver = await startCallbackReceiver();
});
afterAll(() => receiver?.close());

function dispatcher(random = () => 0.5) {
  return createCallbackDispatcher({ prisma: t.ctx.prisma, keyring: t.ctx.keyring, logger: t.ctx.logger, settings: t.ctx.callbacks, pollMs: 60_000, random });
}

/** A job with a callback target and `events` pending deliveries, oldest first. */
async function jobWithDeliveries(events: number): Promise<{ jobId: string; eventIds: string[] }> {
  const jobId = newId("job");
  await t.ctx.prisma.job.create({ data: { id: jobId, tenantId: "ten_1", type: "tron.energy_lease", status: "running", input: {}, callbackState: "pending" } });
  const sealed = sealCallbackSecret(t.ctx.keyring, jobId, SECRET);
  await t.ctx.prisma.jobCallbackTarget.create({ data: { jobId, url: receiver.url, ...secretColumns(sealed) } });
  const eventIds: string[] = [];
  for (let i = 0; i < events; i++) {
    const eventId = newId("evt");
    eventIds.push(eventId);
    await t.ctx.prisma.jobCallbackDelivery.create({
      data: { eventId, jobId, job: { id: jobId, status: i === 0 ? "running" : "succeeded" }, state: "pending", nextAttemptAt: new Date() },
    });
  }
  return { jobId, eventIds };
}

const dueNow = (eventId: string) => t.ctx.prisma.jobCallbackDelivery.update({ where: { eventId }, data: { nextAttemptAt: new Date(Date.now() - 1) } });
const row = (eventId: string) => t.ctx.prisma.jobCallbackDelivery.findUniqueOrThrow({ where: { eventId } });

describe("the callback dispatcher", () => {
  it("posts the signed event with its id, and one event of a job at a time", async () => {
    receiver.respond = () => 200;
    receiver.received.length = 0;
    const { jobId, eventIds } = await jobWithDeliveries(2);
    const d = dispatcher();
    expect(await d.runOnce()).toBe(1); // the second waits for the first
    expect(await d.runOnce()).toBe(1);
    expect(receiver.received.map((r) => r.headers["x-service-event-id"])).toEqual(eventIds);
    for (const r of receiver.received) {
      expect(r.headers["x-service-signature"]).toBe(`sha256=${createHmac("sha256", SECRET).update(r.body).digest("hex")}`);
      expect(JSON.parse(r.body)).toMatchObject({ event: "job.updated", event_id: r.headers["x-service-event-id"], job: { id: jobId } });
    }
    expect(await t.ctx.prisma.job.findUniqueOrThrow({ where: { id: jobId } })).toMatchObject({
      callbackState: "delivered",
      callbackAttempts: 1,
      callbackLastStatus: 200,
    });
  });

  it("schedules retries with exponential backoff, then gives up after 8 attempts", async () => {
    receiver.respond = () => 500;
    receiver.received.length = 0;
    const { jobId, eventIds } = await jobWithDeliveries(1);
    const [eventId] = eventIds as [string];
    const d = dispatcher(() => 0.5); // jitter factor 1
    const delays: number[] = [];
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      await dueNow(eventId);
      const before = Date.now();
      expect(await d.runOnce()).toBe(1);
      const r = await row(eventId);
      expect(r.attempts).toBe(attempt);
      if (attempt < MAX_ATTEMPTS) {
        expect(r.state).toBe("pending");
        delays.push(r.nextAttemptAt.getTime() - before);
      } else expect(r.state).toBe("exhausted");
    }
    // base 1000 ms × 2^(n-1) (jitter factor 1): 1 s, 2 s, 4 s, ... 64 s, give or take the test's own time.
    delays.forEach((delay, i) => {
      expect(Math.abs(delay - 1_000 * 2 ** i)).toBeLessThan(1_000);
    });
    await dueNow(eventId).catch(() => undefined);
    expect(await d.runOnce()).toBe(0);
    expect(new Set(receiver.received.map((r) => r.headers["x-service-event-id"]))).toEqual(new Set([eventId]));
    expect(receiver.received).toHaveLength(8);
    expect(await t.ctx.prisma.job.findUniqueOrThrow({ where: { id: jobId } })).toMatchObject({
      callbackState: "exhausted",
      callbackAttempts: 8,
      callbackLastStatus: 500,
    });
  });

  it("counts an attempt that a crash interrupted, and retries it after the delivery timeout", async () => {
    receiver.respond = () => 200;
    const { eventIds } = await jobWithDeliveries(1);
    const [eventId] = eventIds as [string];
    // A claim whose attempt never reported back (the process died): attempts counted, due again later.
    await t.ctx.prisma.jobCallbackDelivery.update({ where: { eventId }, data: { attempts: 1, nextAttemptAt: new Date(Date.now() + 60_000) } });
    expect(await dispatcher().runOnce()).toBe(0);
    await dueNow(eventId);
    expect(await dispatcher().runOnce()).toBe(1);
    expect(await row(eventId)).toMatchObject({ state: "delivered", attempts: 2 });
  });

  it("never sends to a plain-HTTP non-loopback URL", async () => {
    const { jobId, eventIds } = await jobWithDeliveries(1);
    await t.ctx.prisma.jobCallbackTarget.update({ where: { jobId }, data: { url: "http://192.0.2.1/hook" } });
    await dispatcher().runOnce();
    expect(await row(eventIds[0]!)).toMatchObject({ state: "pending", attempts: 1, lastStatus: null });
  });
});
