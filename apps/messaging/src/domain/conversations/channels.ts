import { isUniqueViolation } from "@gateway/db-kit";
import { AppError } from "@gateway/errors";
import { newId } from "@gateway/ids";
import { appendFeedEvent } from "../feed/append.js";
import type { HubContext } from "../hub-context.js";
import { channelData } from "../views.js";
import { lockConversation } from "./find.js";

export const CHANNEL_TYPES = ["bot_chat", "socialops", "external"] as const;
const REF = /^[A-Za-z0-9._:@/+-]{1,256}$/;

/**
 * Attaches a channel: `bot_chat` (a chat of the tenant's bot: its messages then
 * also appear on the conversation feed), `socialops` (a SocialOps thread id) or
 * `external` (the customer's own reference). A reference belongs to one
 * conversation of the tenant: attaching it again is a conflict.
 */
export async function addChannel({ ctx, input }: { ctx: HubContext; input: { tenantId: string; conversationId: string; type: string; ref: string } }) {
  if (!(CHANNEL_TYPES as readonly string[]).includes(input.type)) throw new AppError("invalid_request", `type must be one of ${CHANNEL_TYPES.join(", ")}.`);
  if (!REF.test(input.ref)) throw new AppError("invalid_request", "ref must be 1-256 of A-Z a-z 0-9 . _ : @ / + -.");
  try {
    const channel = await ctx.transact(async (tx, emit) => {
      await lockConversation(tx, input.tenantId, input.conversationId);
      if (input.type === "bot_chat") {
        const chat = await tx.botChat.findFirst({ where: { id: input.ref, tenantId: input.tenantId } });
        if (!chat) throw new AppError("not_found", "ref is not a chat of this tenant.");
        if (chat.conversationId && chat.conversationId !== input.conversationId) throw new AppError("conflict", "This chat already belongs to another conversation.");
        await tx.botChat.update({ where: { id: chat.id }, data: { conversationId: input.conversationId } });
      }
      const created = await tx.conversationChannel.create({
        data: { id: newId("chn"), tenantId: input.tenantId, conversationId: input.conversationId, type: input.type, ref: input.ref },
      });
      await tx.conversation.update({ where: { id: input.conversationId }, data: { lastActivityAt: new Date() } });
      await emit("conversation.changed", { tenant_id: input.tenantId, conversation_id: input.conversationId, change: "channel_added", participant_id: null, channel_id: created.id });
      await appendFeedEvent(tx, {
        stream: "conversation",
        tenantId: input.tenantId,
        type: "channel.added",
        chatId: input.type === "bot_chat" ? input.ref : null,
        conversationId: input.conversationId,
        data: channelData(created),
      });
      return created;
    });
    ctx.kickWebhooks();
    return channel;
  } catch (err) {
    if (isUniqueViolation(err)) throw new AppError("conflict", "This channel is already attached to a conversation.");
    throw err;
  }
}
