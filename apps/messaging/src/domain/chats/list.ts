import { AppError } from "@gateway/errors";
import type { HubContext } from "../hub-context.js";

/** The tenant's chats, newest first. */
export async function listChats({ ctx, input }: { ctx: HubContext; input: { tenantId: string; botId: string; limit: number } }) {
  return ctx.prisma.botChat.findMany({
    where: { tenantId: input.tenantId, ...(input.botId ? { botId: input.botId } : {}) },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    take: Math.min(Math.max(input.limit || 100, 1), 100),
  });
}

/** A chat of the tenant; another tenant's chat does not exist. */
export async function findChat(ctx: Pick<HubContext, "prisma">, tenantId: string, chatId: string) {
  const chat = await ctx.prisma.botChat.findFirst({ where: { id: chatId, tenantId } });
  if (!chat) throw new AppError("not_found", "No such chat.");
  return chat;
}
