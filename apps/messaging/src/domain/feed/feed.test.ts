import { newId } from "@gateway/contract/ids";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestHub, type TestHub } from "../../testing/hub.js";
import { appendFeedEvent } from "./append.js";
import { listFeed } from "./list.js";

let hub: TestHub;
beforeAll(async () => {
  hub = await createTestHub();
});
afterAll(async () => hub?.close());

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

const read = (tenantId: string, cursor = "", limit = 100) => listFeed({ ctx: hub.ctx, input: { tenantId, stream: "widget", cursor, limit } });

describe("feed positions", () => {
  it("become visible in order: a later writer waits for the earlier one's commit, so a reader never sees a hole", async () => {
    const tenantId = "ten_order";
    const gate = deferred();
    const appended = deferred();
    // Writer A appends and holds its transaction open.
    const a = hub.ctx.prisma.$transaction(async (tx) => {
      const event = await appendFeedEvent(tx, { id: newId("fev"), stream: "widget", tenantId, type: "chat.action", data: { n: "a" } });
      appended.resolve();
      await gate.promise;
      return event;
    });
    await appended.promise;
    // Writer B starts after A took position 1 and must wait for it.
    let bDone = false;
    const b = hub.ctx.prisma
      .$transaction((tx) => appendFeedEvent(tx, { id: newId("fev"), stream: "widget", tenantId, type: "chat.action", data: { n: "b" } }))
      .then((e) => {
        bDone = true;
        return e;
      });
    await new Promise((r) => setTimeout(r, 200));
    expect(bDone).toBe(false);
    // With A uncommitted nothing is visible; no reader can have passed position 1.
    expect((await read(tenantId)).events).toEqual([]);
    gate.resolve();
    const [ea, eb] = await Promise.all([a, b]);
    expect([ea.position, eb.position]).toEqual([1n, 2n]);
    const page = await read(tenantId);
    expect(page.events.map((e) => [e.cursor, (e.data as { n: string }).n])).toEqual([
      ["1", "a"],
      ["2", "b"],
    ]);
    expect(page.nextCursor).toBe("2");
  });

  it("a rolled-back append gives its position back: no hole", async () => {
    const tenantId = "ten_rollback";
    await expect(
      hub.ctx.prisma.$transaction(async (tx) => {
        await appendFeedEvent(tx, { id: newId("fev"), stream: "widget", tenantId, type: "chat.action", data: {} });
        throw new Error("abort");
      }),
    ).rejects.toThrow("abort");
    await hub.ctx.prisma.$transaction((tx) => appendFeedEvent(tx, { id: newId("fev"), stream: "widget", tenantId, type: "chat.action", data: {} }));
    expect((await read(tenantId)).events.map((e) => e.cursor)).toEqual(["1"]);
  });

  it("concurrent appends get 1..n; every cursor pages to exactly the following events; streams and tenants are apart", async () => {
    const tenantId = "ten_many";
    await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        hub.ctx.prisma.$transaction((tx) =>
          appendFeedEvent(tx, { id: newId("fev"), stream: "widget", tenantId, type: "message.created", chatId: `chat_${i % 3}`, data: { i } }),
        ),
      ),
    );
    await hub.ctx.prisma.$transaction((tx) =>
      appendFeedEvent(tx, { id: newId("fev"), stream: "conversation", tenantId, type: "conversation.created", data: {} }),
    );
    await hub.ctx.prisma.$transaction((tx) => appendFeedEvent(tx, { id: newId("fev"), stream: "widget", tenantId: "ten_else", type: "chat.action", data: {} }));
    const all = (await read(tenantId, "", 100)).events;
    expect(all.map((e) => e.cursor)).toEqual(Array.from({ length: 60 }, (_, i) => String(i + 1)));
    for (let c = 0; c <= 60; c++) {
      const page = await read(tenantId, String(c), 7);
      expect(page.events.map((e) => e.id)).toEqual(all.slice(c, c + 7).map((e) => e.id));
    }
    const chat = await listFeed({ ctx: hub.ctx, input: { tenantId, stream: "widget", cursor: "", limit: 100, chatId: "chat_1" } });
    expect(chat.events.map((e) => e.id)).toEqual(all.filter((e) => e.chatId === "chat_1").map((e) => e.id));
    const conv = await listFeed({ ctx: hub.ctx, input: { tenantId, stream: "conversation", cursor: "", limit: 100 } });
    expect(conv.events.map((e) => e.cursor)).toEqual(["1"]);
  });

  it("refuses cursors it did not issue and clamps limits", async () => {
    for (const cursor of ["x", "-1", "01", "1.0", "9".repeat(19)]) await expect(read("ten_many", cursor)).rejects.toMatchObject({ code: "invalid_request" });
    expect((await read("ten_many", "", 1000)).events).toHaveLength(60);
    expect((await read("ten_many", "60")).nextCursor).toBe("60");
  });
});
