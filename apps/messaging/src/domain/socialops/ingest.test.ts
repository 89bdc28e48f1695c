import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestContext, type TestContext } from "../../testing/context.js";
import { ingestSocialEvent } from "./ingest.js";
import { queueSocialReply } from "./reply.js";
import { listSocialMessages, listSocialThreads } from "./list.js";

let t: TestContext;
beforeAll(async () => {
  t = await createTestContext();
  await t.ctx.prisma.appInstance.create({
    data: {
      id: "inst_s",
      tenantId: "ten_1",
      serviceId: "socialops",
      alias: "inbox",
      status: "active",
      config: { reply_webhook_url: "http://127.0.0.1:1/r", reply_webhook_secret: null },
      version: 1,
    },
  });
});
afterAll(async () => t?.close());

const event = (event_id: string, thread_id = "T") => ({
  tenant_id: "ten_1",
  alias: "inbox",
  provider: "generic",
  event_id,
  thread_id,
  subject: "s",
  text: "x",
  author: null,
});

describe("ingesting SocialOps events", () => {
  it("stores concurrent duplicates once; every answer carries the stored ids", async () => {
    const answers = await Promise.all(Array.from({ length: 20 }, () => ingestSocialEvent({ ctx: t.ctx, input: event("e-1") })));
    expect(new Set(answers.map((a) => `${a.threadId}/${a.messageId}`)).size).toBe(1);
    expect(answers.filter((a) => !a.duplicate)).toHaveLength(1);
    expect(await t.ctx.prisma.socialMessage.count({ where: { eventId: "e-1" } })).toBe(1);
    expect(await t.outbox("socialops.message_received")).toHaveLength(1);
  });

  it("counts unread messages per thread until a reply, and orders threads by newest activity", async () => {
    await ingestSocialEvent({ ctx: t.ctx, input: event("u-1", "U") });
    const second = await ingestSocialEvent({ ctx: t.ctx, input: event("u-2", "U") });
    let threads = (await listSocialThreads({ ctx: t.ctx, input: { tenant_id: "ten_1", alias: "inbox", limit: 0 } })).items;
    expect(threads.map((th) => [th.externalThreadId, th.unreadCount])).toEqual([
      ["U", 2],
      ["T", 1],
    ]);
    const reply = await queueSocialReply({ ctx: t.ctx, input: { tenant_id: "ten_1", alias: "inbox", thread_id: second.threadId, text: "ok" } });
    expect(reply.deliveryState).toBe("queued");
    threads = (await listSocialThreads({ ctx: t.ctx, input: { tenant_id: "ten_1", alias: "inbox", limit: 0 } })).items;
    expect(threads[0]).toMatchObject({ externalThreadId: "U", unreadCount: 0, messageCount: 3 });
    expect((await t.outbox("socialops.reply_queued")).map((e) => e.payload.message_id)).toEqual([reply.id]);
    await expect(listSocialThreads({ ctx: t.ctx, input: { tenant_id: "ten_2", alias: "inbox", limit: 0 } })).rejects.toMatchObject({ code: "not_found" });
  });

  it("pages threads by creation and messages oldest first, neither skipping nor repeating while activity goes on", async () => {
    const ids = [];
    for (const thread of ["P1", "P2", "P3"]) ids.push((await ingestSocialEvent({ ctx: t.ctx, input: event(`p-${thread}`, thread) })).threadId);
    const first = await listSocialThreads({ ctx: t.ctx, input: { tenant_id: "ten_1", alias: "inbox", limit: 2, paged: true } });
    expect(first.items.map((th) => th.externalThreadId)).toEqual(["P3", "P2"]);
    // New activity on an older thread and a new thread: the inbox order changes, the pages do not.
    await ingestSocialEvent({ ctx: t.ctx, input: event("p-P1-again", "P1") });
    await ingestSocialEvent({ ctx: t.ctx, input: event("p-P4", "P4") });
    const seen = first.items.map((th) => th.externalThreadId);
    let cursor = first.nextCursor;
    while (cursor) {
      const page = await listSocialThreads({ ctx: t.ctx, input: { tenant_id: "ten_1", alias: "inbox", limit: 2, cursor, paged: true } });
      seen.push(...page.items.map((th) => th.externalThreadId));
      cursor = page.nextCursor;
    }
    expect(seen).toEqual(["P3", "P2", "P1", "U", "T"]);

    const thread = ids[0]!;
    for (let i = 0; i < 3; i++) await ingestSocialEvent({ ctx: t.ctx, input: event(`m-${i}`, "P1") });
    const texts: string[] = [];
    let at = "";
    do {
      const page = await listSocialMessages({ ctx: t.ctx, input: { tenant_id: "ten_1", alias: "inbox", thread_id: thread, limit: 2, cursor: at } });
      texts.push(...page.items.map((m) => m.eventId ?? ""));
      at = page.nextCursor;
    } while (at);
    expect(texts).toEqual(["p-P1", "p-P1-again", "m-0", "m-1", "m-2"]);
  });
});
