import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestHub, type TestHub } from "../../testing/hub.js";
import { chatAction } from "../chats/action.js";
import { createConversation } from "../conversations/create.js";
import { createWidgetSession } from "./create.js";
import { listWidgetSessions } from "./list.js";

let hub: TestHub;
beforeAll(async () => {
  hub = await createTestHub();
});
afterAll(async () => hub?.close());

describe("a conversation's widget sessions", () => {
  it("lists the sessions opened in it, newest first, ended ones with their reason; other conversations' and tenants' stay out", async () => {
    const conv = await createConversation({ ctx: hub.ctx, input: { tenantId: "ten_1", subject: "help", metadataJson: "", participants: [] } });
    const id = conv.conversation.id;
    const open = (tenantId: string, visitorId: string, conversationId: string) =>
      createWidgetSession({ ctx: hub.ctx, input: { tenantId, visitorId, displayName: "", botId: "", conversationId } });
    const a = await open("ten_1", "v-a", id);
    const b = await open("ten_1", "v-b", id);
    await open("ten_1", "v-c", "");
    await chatAction({ ctx: hub.ctx, input: { tenantId: "ten_1", chatId: a.chatId, action: "end", author: "bot" } });

    const sessions = await listWidgetSessions({ ctx: hub.ctx, input: { tenantId: "ten_1", conversationId: id, limit: 0 } });
    expect(sessions.map((s) => [s.visitorId, s.revokedReason])).toEqual([
      ["v-b", null],
      ["v-a", "chat_ended"],
    ]);
    expect(sessions[0]!.id).toBe(b.sessionId);
    await expect(listWidgetSessions({ ctx: hub.ctx, input: { tenantId: "ten_2", conversationId: id, limit: 10 } })).rejects.toMatchObject({
      code: "not_found",
    });
  });
});
