import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestHub, type TestHub } from "../../testing/hub.js";
import { listFeed } from "../feed/list.js";
import { createMessage } from "../messages/create.js";
import { createWidgetSession } from "../widget-sessions/create.js";
import { addChannel, removeChannel, updateChannel } from "./channels.js";
import { createConversation } from "./create.js";
import { getConversation } from "./find.js";

let hub: TestHub;
beforeAll(async () => {
  hub = await createTestHub();
});
afterAll(async () => hub?.close());

const newConversation = async (tenantId: string) =>
  (await createConversation({ ctx: hub.ctx, input: { tenantId, subject: "", metadataJson: "", participants: [] } })).conversation.id;
const newChat = async (tenantId: string, visitorId: string) =>
  (await createWidgetSession({ ctx: hub.ctx, input: { tenantId, visitorId, displayName: "", botId: "", conversationId: "" } })).chatId;
const say = (tenantId: string, chatId: string, text: string) =>
  createMessage({ ctx: hub.ctx, input: { tenantId, chatId, author: "visitor", kind: "text", text, fileId: "", replyToMessageId: "" } });
const chatOf = (id: string) => hub.ctx.prisma.botChat.findUniqueOrThrow({ where: { id } });

describe("channels", () => {
  it("change moves a bot chat out of the conversation and another in; remove detaches it; both reach the feed and the outbox", async () => {
    const tenantId = "ten_ch";
    const id = await newConversation(tenantId);
    const [first, second] = [await newChat(tenantId, "v1"), await newChat(tenantId, "v2")];
    const channel = await addChannel({ ctx: hub.ctx, input: { tenantId, conversationId: id, type: "bot_chat", ref: first } });

    const moved = await updateChannel({ ctx: hub.ctx, input: { tenantId, conversationId: id, channelId: channel.id, type: "", ref: second } });
    expect(moved).toMatchObject({ id: channel.id, type: "bot_chat", ref: second });
    expect((await chatOf(first)).conversationId).toBeNull();
    expect((await chatOf(second)).conversationId).toBe(id);
    await say(tenantId, first, "not here");
    await say(tenantId, second, "here");

    const external = await updateChannel({ ctx: hub.ctx, input: { tenantId, conversationId: id, channelId: channel.id, type: "external", ref: "crm:42" } });
    expect(external).toMatchObject({ id: channel.id, type: "external", ref: "crm:42" });
    expect((await chatOf(second)).conversationId).toBeNull();

    await removeChannel({ ctx: hub.ctx, input: { tenantId, conversationId: id, channelId: channel.id } });
    expect((await getConversation({ ctx: hub.ctx, input: { tenantId, id } })).channels).toEqual([]);

    const feed = await listFeed({ ctx: hub.ctx, input: { tenantId, stream: "conversation", cursor: "", limit: 100 } });
    const events = feed.events.filter((e) => e.conversationId === id);
    expect(events.map((e) => e.type)).toEqual([
      "conversation.created",
      "channel.added",
      "channel.updated",
      "message.created",
      "channel.updated",
      "channel.removed",
    ]);
    expect(events[2]!.data).toMatchObject({ id: channel.id, ref: second, previous: { type: "bot_chat", ref: first } });
    const outbox = (await hub.outbox()).filter((e) => e.payload.conversation_id === id);
    expect(outbox.map((e) => [e.type, e.payload.channel_id ?? null])).toEqual([
      ["conversation.created", null],
      ["channel.added", channel.id],
      ["channel.updated", channel.id],
      ["message.created", null],
      ["channel.updated", channel.id],
      ["channel.removed", channel.id],
    ]);
  });

  it("an unchanged reference writes nothing", async () => {
    const tenantId = "ten_same";
    const id = await newConversation(tenantId);
    const channel = await addChannel({ ctx: hub.ctx, input: { tenantId, conversationId: id, type: "external", ref: "r1" } });
    const before = (await hub.outbox()).length;
    expect(await updateChannel({ ctx: hub.ctx, input: { tenantId, conversationId: id, channelId: channel.id, type: "", ref: "r1" } })).toMatchObject({
      ref: "r1",
    });
    expect((await hub.outbox()).length).toBe(before);
  });

  it("refuses bad input, taken references and other tenants' records", async () => {
    const tenantId = "ten_bad";
    const id = await newConversation(tenantId);
    const other = await newConversation(tenantId);
    const channel = await addChannel({ ctx: hub.ctx, input: { tenantId, conversationId: id, type: "external", ref: "a" } });
    await addChannel({ ctx: hub.ctx, input: { tenantId, conversationId: other, type: "external", ref: "taken" } });
    const theirs = await newChat("ten_other", "v9");
    const busy = await newChat(tenantId, "v8");
    await addChannel({ ctx: hub.ctx, input: { tenantId, conversationId: other, type: "bot_chat", ref: busy } });

    const change = (input: { type?: string; ref: string; channelId?: string; tenantId?: string }) =>
      updateChannel({
        ctx: hub.ctx,
        input: { tenantId: input.tenantId ?? tenantId, conversationId: id, channelId: input.channelId ?? channel.id, type: input.type ?? "", ref: input.ref },
      });
    await expect(change({ type: "fax", ref: "b" })).rejects.toMatchObject({ code: "invalid_request" });
    await expect(change({ ref: "no spaces" })).rejects.toMatchObject({ code: "invalid_request" });
    await expect(change({ ref: "taken" })).rejects.toMatchObject({ code: "conflict" });
    await expect(change({ type: "bot_chat", ref: theirs })).rejects.toMatchObject({ code: "not_found" });
    await expect(change({ type: "bot_chat", ref: busy })).rejects.toMatchObject({ code: "conflict" });
    await expect(change({ channelId: "chn_nope", ref: "b" })).rejects.toMatchObject({ code: "not_found" });
    await expect(change({ tenantId: "ten_other", ref: "b" })).rejects.toMatchObject({ code: "not_found" });
    await expect(removeChannel({ ctx: hub.ctx, input: { tenantId: "ten_other", conversationId: id, channelId: channel.id } })).rejects.toMatchObject({
      code: "not_found",
    });
    await expect(removeChannel({ ctx: hub.ctx, input: { tenantId, conversationId: other, channelId: channel.id } })).rejects.toMatchObject({
      code: "not_found",
    });
    // Nothing of the refused changes stuck.
    expect((await getConversation({ ctx: hub.ctx, input: { tenantId, id } })).channels).toMatchObject([{ id: channel.id, type: "external", ref: "a" }]);
    expect((await chatOf(busy)).conversationId).toBe(other);
  });
});
