import { isUniqueViolation } from "@gateway/db-kit";
import { AppError } from "@gateway/errors";
import { newId } from "@gateway/contract/ids";
import type { Tx } from "../../db.js";
import type { ConversationChannel } from "../../generated/prisma/client.js";
import type { HubContext } from "../hub-context.js";
import { channelData } from "../views.js";
import { lockConversation } from "./find.js";

export const CHANNEL_TYPES = ["bot_chat", "socialops", "external"] as const;
const REF = /^[A-Za-z0-9._:@/+-]{1,256}$/;

type ChannelInput = { tenantId: string; conversationId: string; type: string; ref: string };
const ALREADY_ATTACHED = "This channel is already attached to a conversation.";

function checkChannel(type: string, ref: string) {
  if (!(CHANNEL_TYPES as readonly string[]).includes(type)) throw new AppError("invalid_request", `type must be one of ${CHANNEL_TYPES.join(", ")}.`);
  if (!REF.test(ref)) throw new AppError("invalid_request", "ref must be 1-256 of A-Z a-z 0-9 . _ : @ / + -.");
}

/** A `bot_chat` channel joins its chat to the conversation (its messages then reach the conversation feed). */
async function attachChat(tx: Tx, input: ChannelInput) {
  const chat = await tx.botChat.findFirst({ where: { id: input.ref, tenantId: input.tenantId } });
  if (!chat) throw new AppError("not_found", "ref is not a chat of this tenant.");
  if (chat.conversationId && chat.conversationId !== input.conversationId) throw new AppError("conflict", "This chat already belongs to another conversation.");
  await tx.botChat.update({ where: { id: chat.id }, data: { conversationId: input.conversationId } });
}

/** The chat of a `bot_chat` channel leaves the conversation: its later messages stay on the widget feed only. */
async function detachChat(tx: Tx, channel: ConversationChannel) {
  if (channel.type !== "bot_chat") return;
  await tx.botChat.updateMany({
    where: { id: channel.ref, tenantId: channel.tenantId, conversationId: channel.conversationId },
    data: { conversationId: null },
  });
}

async function findChannel(tx: Tx, input: { conversationId: string; channelId: string }) {
  const channel = await tx.conversationChannel.findFirst({ where: { id: input.channelId, conversationId: input.conversationId } });
  if (!channel) throw new AppError("not_found", "No such channel in this conversation.");
  return channel;
}

/** A reference already attached elsewhere (the unique tenant/type/ref index) is a conflict. */
async function orConflict<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (err) {
    if (isUniqueViolation(err)) throw new AppError("conflict", ALREADY_ATTACHED);
    throw err;
  }
}

/**
 * Attaches a channel: `bot_chat` (a chat of the tenant's bot: its messages then
 * also appear on the conversation feed), `socialops` (a SocialOps thread id) or
 * `external` (the customer's own reference). A reference belongs to one
 * conversation of the tenant: attaching it again is a conflict.
 */
export async function addChannel({ ctx, input }: { ctx: HubContext; input: ChannelInput }) {
  checkChannel(input.type, input.ref);
  const channel = await orConflict(
    ctx.transact(async (tx, emit) => {
      await lockConversation(tx, input.tenantId, input.conversationId);
      if (input.type === "bot_chat") await attachChat(tx, input);
      const created = await tx.conversationChannel.create({
        data: { id: newId("chn"), tenantId: input.tenantId, conversationId: input.conversationId, type: input.type, ref: input.ref },
      });
      await tx.conversation.update({ where: { id: input.conversationId }, data: { lastActivityAt: new Date() } });
      await emit(
        "channel.added",
        { tenant_id: input.tenantId, conversation_id: input.conversationId, channel_id: created.id, chat_id: input.type === "bot_chat" ? input.ref : null },
        { view: channelData(created) },
      );
      return created;
    }),
  );
  ctx.kickWebhooks();
  return channel;
}

/**
 * Points a channel at another reference (and, when `type` is given, another kind).
 * A `bot_chat` channel's old chat leaves the conversation and the new one joins it,
 * under the same rules as attaching. The channel keeps its id.
 */
export async function updateChannel({
  ctx,
  input,
}: {
  ctx: HubContext;
  input: { tenantId: string; conversationId: string; channelId: string; type: string; ref: string };
}) {
  const channel = await orConflict(
    ctx.transact(async (tx, emit) => {
      await lockConversation(tx, input.tenantId, input.conversationId);
      const current = await findChannel(tx, input);
      const type = input.type || current.type;
      checkChannel(type, input.ref);
      if (type === current.type && input.ref === current.ref) return current;
      await detachChat(tx, current);
      if (type === "bot_chat") await attachChat(tx, { ...input, type });
      const updated = await tx.conversationChannel.update({ where: { id: current.id }, data: { type, ref: input.ref } });
      await tx.conversation.update({ where: { id: input.conversationId }, data: { lastActivityAt: new Date() } });
      await emit(
        "channel.updated",
        { tenant_id: input.tenantId, conversation_id: input.conversationId, channel_id: current.id, chat_id: type === "bot_chat" ? input.ref : null },
        { view: { ...channelData(updated), previous: { type: current.type, ref: current.ref } } },
      );
      return updated;
    }),
  );
  ctx.kickWebhooks();
  return channel;
}

/** Detaches a channel; a `bot_chat` channel's chat leaves the conversation (its messages stay where they are). */
export async function removeChannel({ ctx, input }: { ctx: HubContext; input: { tenantId: string; conversationId: string; channelId: string } }) {
  await ctx.transact(async (tx, emit) => {
    await lockConversation(tx, input.tenantId, input.conversationId);
    const current = await findChannel(tx, input);
    await detachChat(tx, current);
    await tx.conversationChannel.delete({ where: { id: current.id } });
    await tx.conversation.update({ where: { id: input.conversationId }, data: { lastActivityAt: new Date() } });
    await emit(
      "channel.removed",
      { tenant_id: input.tenantId, conversation_id: input.conversationId, channel_id: current.id, chat_id: current.type === "bot_chat" ? current.ref : null },
      { view: channelData(current) },
    );
  });
  ctx.kickWebhooks();
}
