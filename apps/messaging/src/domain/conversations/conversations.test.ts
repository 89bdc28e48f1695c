import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestHub, type TestHub } from "../../testing/hub.js";
import { listFeed } from "../feed/list.js";
import { CONVERSATION_EVENT_TYPES, feedEventId } from "../feed/project.js";
import { createMessage } from "../messages/create.js";
import { createWidgetSession } from "../widget-sessions/create.js";
import { createConversation } from "./create.js";
import { addParticipant } from "./participants.js";
import { updateConversation } from "./update.js";

let hub: TestHub;
beforeAll(async () => {
  hub = await createTestHub();
});
afterAll(async () => hub?.close());

describe("conversations", () => {
  it("write every change to the outbox once (ids only), the tenant's conversation feed its projection, in one transaction", async () => {
    const tenantId = "ten_c";
    const detail = await createConversation({
      ctx: hub.ctx,
      input: { tenantId, subject: "s", metadataJson: '{"k":"v"}', participants: [{ kind: "agent", external_id: "a1", display_name: "", role: "" }] },
    });
    const id = detail.conversation.id;
    const grant = await createWidgetSession({ ctx: hub.ctx, input: { tenantId, visitorId: "v1", displayName: "Vi", botId: "", conversationId: id } });
    await createMessage({
      ctx: hub.ctx,
      input: { tenantId, chatId: grant.chatId, author: "visitor", kind: "text", text: "secret words", fileId: "", replyToMessageId: "" },
    });
    await updateConversation({ ctx: hub.ctx, input: { tenantId, id, status: "closed", metadataJson: "", version: 1 } });

    const feed = await listFeed({ ctx: hub.ctx, input: { tenantId, stream: "conversation", cursor: "", limit: 100 } });
    expect(feed.events.map((e) => e.type)).toEqual([
      "conversation.created",
      "participant.added",
      "channel.added",
      "participant.added",
      "widget_session.created",
      "message.created",
      "conversation.updated",
    ]);
    // One event per change: the feed's rows are its events, of the same kinds, in the same order, each named after its event.
    const outbox = (await hub.outbox()).filter((e) => e.payload.conversation_id === id && (CONVERSATION_EVENT_TYPES as string[]).includes(e.type));
    expect(outbox.map((e) => e.type)).toEqual(feed.events.map((e) => e.type));
    expect(feed.events.map((e) => e.id)).toEqual(outbox.map((e) => feedEventId(e.id, "conversation")));
    expect(outbox[1]!.payload).toEqual({ tenant_id: tenantId, conversation_id: id, participant_id: detail.participants[0]!.id });
    const all = JSON.stringify(await hub.outbox());
    expect(all).not.toContain("secret words");
    expect(all).not.toContain(grant.refreshToken);
  });

  it("check versions and tenancy", async () => {
    const detail = await createConversation({ ctx: hub.ctx, input: { tenantId: "ten_v", subject: "", metadataJson: "", participants: [] } });
    const id = detail.conversation.id;
    await expect(updateConversation({ ctx: hub.ctx, input: { tenantId: "ten_v", id, status: "", metadataJson: "", version: 2 } })).rejects.toMatchObject({
      code: "conflict",
    });
    await expect(updateConversation({ ctx: hub.ctx, input: { tenantId: "ten_x", id, status: "closed", metadataJson: "" } })).rejects.toMatchObject({
      code: "not_found",
    });
    await expect(
      addParticipant({ ctx: hub.ctx, input: { tenantId: "ten_x", conversationId: id, kind: "bot", external_id: "b", display_name: "", role: "" } }),
    ).rejects.toMatchObject({
      code: "not_found",
    });
    await addParticipant({ ctx: hub.ctx, input: { tenantId: "ten_v", conversationId: id, kind: "bot", external_id: "b", display_name: "", role: "" } });
    await expect(
      addParticipant({ ctx: hub.ctx, input: { tenantId: "ten_v", conversationId: id, kind: "bot", external_id: "b", display_name: "", role: "" } }),
    ).rejects.toMatchObject({
      code: "conflict",
    });
    await expect(createConversation({ ctx: hub.ctx, input: { tenantId: "ten_v", subject: "", metadataJson: "[1]", participants: [] } })).rejects.toMatchObject({
      code: "invalid_request",
    });
  });
});
