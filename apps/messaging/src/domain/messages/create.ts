import { AppError } from "@gateway/errors";
import { newId } from "@gateway/contract/ids";
import type { HubEmit, Tx } from "../../db.js";
import type { BotChat, BotMessage } from "../../generated/prisma/client.js";
import { findChat } from "../chats/list.js";
import { assertFileIdFormat } from "../files/file-refs.js";
import type { HubContext } from "../hub-context.js";
import { messageData } from "../views.js";

export const MAX_TEXT = 4096;

export type CreateMessageInput = {
  tenantId: string;
  chatId: string;
  author: "bot" | "visitor";
  kind: "text" | "file";
  text: string;
  fileId: string;
  replyToMessageId: string;
};

/**
 * The event of a message change: on the tenant's widget feed (the chat's visitor sees it)
 * and, when the chat is a channel of a conversation, on the conversation feed (which also
 * queues webhooks), whose activity it is.
 */
export async function messageChanged(
  tx: Tx,
  emit: HubEmit,
  chat: BotChat,
  message: BotMessage,
  type: "message.created" | "message.updated" | "message.deleted",
) {
  if (chat.conversationId) {
    await tx.conversation.updateMany({ where: { id: chat.conversationId, tenantId: chat.tenantId }, data: { lastActivityAt: new Date() } });
  }
  await emit(
    type,
    {
      tenant_id: chat.tenantId,
      chat_id: chat.id,
      conversation_id: chat.conversationId,
      message_id: message.id,
      author: message.author,
      kind: message.kind,
    },
    { view: messageData(message) },
  );
}

/** A text message, or a file message (a file id of the files service, with an optional caption). */
export async function createMessage({ ctx, input }: { ctx: HubContext; input: CreateMessageInput }): Promise<BotMessage> {
  const chat = await findChat(ctx, input.tenantId, input.chatId);
  if (input.kind === "text") {
    if (input.text.trim().length === 0) throw new AppError("invalid_request", "text is required (1-4096 characters).");
    if (input.fileId) throw new AppError("invalid_request", "file_id belongs on a file message.");
  } else {
    assertFileIdFormat(input.fileId);
    await ctx.files.check({ tenantId: input.tenantId, fileId: input.fileId });
  }
  if (input.text.length > MAX_TEXT) throw new AppError("invalid_request", "text must be at most 4096 characters.");
  if (input.replyToMessageId) {
    const target = await ctx.prisma.botMessage.findFirst({ where: { id: input.replyToMessageId, chatId: chat.id, tenantId: input.tenantId } });
    if (!target) throw new AppError("not_found", "reply_to_message_id is not a message of this chat.");
  }
  const message = await ctx.transact(async (tx, emit) => {
    const created = await tx.botMessage.create({
      data: {
        id: newId("msg"),
        tenantId: input.tenantId,
        chatId: chat.id,
        author: input.author,
        kind: input.kind,
        text: input.text || null,
        fileId: input.fileId || null,
        replyToMessageId: input.replyToMessageId || null,
      },
    });
    await tx.botChat.update({ where: { id: chat.id }, data: { lastMessageAt: created.createdAt } });
    await messageChanged(tx, emit, chat, created, "message.created");
    return created;
  });
  if (chat.conversationId) ctx.kickWebhooks();
  return message;
}
