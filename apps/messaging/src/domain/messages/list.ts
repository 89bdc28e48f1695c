import { AppError } from "@gateway/errors";
import { findChat } from "../chats/list.js";
import type { HubContext } from "../hub-context.js";

/** A chat's messages in the order they were written (oldest first), after the message `after` when given. */
export async function listMessages({ ctx, input }: { ctx: HubContext; input: { tenantId: string; chatId: string; after: string; limit: number } }) {
  const chat = await findChat(ctx, input.tenantId, input.chatId);
  let anchor: { createdAt: Date; id: string } | null = null;
  if (input.after) {
    anchor = await ctx.prisma.botMessage.findFirst({ where: { id: input.after, chatId: chat.id }, select: { createdAt: true, id: true } });
    if (!anchor) throw new AppError("invalid_request", "after must be a message id of this chat.");
  }
  return ctx.prisma.botMessage.findMany({
    where: {
      chatId: chat.id,
      ...(anchor ? { OR: [{ createdAt: { gt: anchor.createdAt } }, { createdAt: anchor.createdAt, id: { gt: anchor.id } }] } : {}),
    },
    orderBy: [{ createdAt: "asc" }, { id: "asc" }],
    take: Math.min(Math.max(input.limit || 100, 1), 100),
  });
}
