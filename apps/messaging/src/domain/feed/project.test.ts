import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CONVERSATION_EVENT_KINDS } from "@gateway/contract";
import { isEventType } from "@gateway/events";
import { createTestHub, type TestHub } from "../../testing/hub.js";
import { listFeed } from "./list.js";
import { CONVERSATION_EVENT_TYPES, feedEventId, WIDGET_EVENT_TYPES } from "./project.js";

let hub: TestHub;
beforeAll(async () => {
  hub = await createTestHub();
});
afterAll(async () => hub?.close());

const feed = (tenantId: string, stream: "widget" | "conversation") => listFeed({ ctx: hub.ctx, input: { tenantId, stream, cursor: "", limit: 100 } });

describe("the feeds as a projection of catalog events", () => {
  it("have the contract's kinds (docs/decisions/0124), each a catalog event type", () => {
    expect(WIDGET_EVENT_TYPES).toEqual([
      "chat.created",
      "session.created",
      "session.revoked",
      "message.created",
      "message.updated",
      "message.deleted",
      "chat.action",
    ]);
    expect(CONVERSATION_EVENT_TYPES).toEqual([...CONVERSATION_EVENT_KINDS]);
    for (const kind of [...WIDGET_EVENT_TYPES, ...CONVERSATION_EVENT_TYPES]) expect(isEventType(kind)).toBe(true);
  });

  it("write an event's rows with the event, on its streams, named after it; a message outside a conversation stays on the widget feed", async () => {
    const tenantId = "ten_p";
    const data = { tenant_id: tenantId, chat_id: "chat_1", conversation_id: null, message_id: "msg_1", author: "bot", kind: "text" };
    const id = await hub.ctx.transact((_tx, emit) => emit("message.created", data, { view: { id: "msg_1", text: "hello" } }));
    const rows = (await feed(tenantId, "widget")).events;
    expect(rows.map((r) => [r.id, r.type, r.chatId, r.conversationId, r.data])).toEqual([
      [feedEventId(id, "widget"), "message.created", "chat_1", null, { id: "msg_1", text: "hello" }],
    ]);
    expect((await feed(tenantId, "conversation")).events).toEqual([]);
    const [event] = (await hub.outbox()).filter((e) => e.id === id);
    expect(event).toEqual({ id, type: "message.created", payload: data });
  });

  it("refuse a feed kind without its view before anything is written, and leave a session ended with its chat off the feed", async () => {
    const tenantId = "ten_q";
    const before = (await hub.outbox()).length;
    await expect(hub.ctx.transact((_tx, emit) => emit("chat.created", { tenant_id: tenantId, chat_id: "chat_2", conversation_id: null }))).rejects.toThrow(
      "feed event chat.created emitted without its view",
    );
    expect((await hub.outbox()).length).toBe(before);
    await hub.ctx.transact((_tx, emit) =>
      emit("session.revoked", { tenant_id: tenantId, session_id: "wses_1", chat_id: "chat_2", conversation_id: null, reason: "chat_ended" }),
    );
    expect((await feed(tenantId, "widget")).events).toEqual([]);
    expect((await hub.outbox()).length).toBe(before + 1);
  });
});
