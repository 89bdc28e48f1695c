import { AppError } from "@gateway/errors";
import { findChat } from "../chats/list.js";
import type { HubContext } from "../hub-context.js";
import { MAX_TEXT, messageChanged } from "./create.js";

async function findMessage(ctx: HubContext, tenantId: string, messageId: string) {
  const message = await ctx.prisma.botMessage.findFirst({ where: { id: messageId, tenantId } });
  if (!message) throw new AppError("not_found", "No such message.");
  return message;
}

/** Edits the text (or a file message's caption) of one of the bot's messages. */
export async function updateMessage({ ctx, input }: { ctx: HubContext; input: { tenantId: string; messageId: string; text: string } }) {
  if (input.text.trim().length === 0 || input.text.length > MAX_TEXT) throw new AppError("invalid_request", "text must be 1-4096 characters.");
  const current = await findMessage(ctx, input.tenantId, input.messageId);
  if (current.author !== "bot") throw new AppError("conflict", "Only the bot's own messages can be edited.");
  const chat = await findChat(ctx, input.tenantId, current.chatId);
  const updated = await ctx.transact(async (tx, emit) => {
    // Only a message that is still there changes (a concurrent delete wins).
    const changed = await tx.botMessage.updateMany({ where: { id: current.id, deletedAt: null }, data: { text: input.text, editedAt: new Date() } });
    if (changed.count === 0) throw new AppError("conflict", "The message was deleted.");
    const message = await tx.botMessage.findUniqueOrThrow({ where: { id: current.id } });
    await messageChanged(tx, emit, chat, message, "message.updated");
    return message;
  });
  if (chat.conversationId) ctx.kickWebhooks();
  return updated;
}

/** Deletes a message (bot's or visitor's): it keeps its place in the history, without content. Deleting again changes nothing. */
export async function deleteMessage({ ctx, input }: { ctx: HubContext; input: { tenantId: string; messageId: string } }) {
  const current = await findMessage(ctx, input.tenantId, input.messageId);
  if (current.deletedAt) return current;
  const chat = await findChat(ctx, input.tenantId, current.chatId);
  const deleted = await ctx.transact(async (tx, emit) => {
    const changed = await tx.botMessage.updateMany({ where: { id: current.id, deletedAt: null }, data: { deletedAt: new Date(), text: null, fileId: null } });
    const message = await tx.botMessage.findUniqueOrThrow({ where: { id: current.id } });
    if (changed.count === 0) return message;
    await messageChanged(tx, emit, chat, message, "message.deleted");
    return message;
  });
  if (chat.conversationId) ctx.kickWebhooks();
  return deleted;
}
