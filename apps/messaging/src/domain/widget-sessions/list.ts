import { AppError } from "@gateway/errors";
import type { HubContext } from "../hub-context.js";

/** The widget sessions opened in a conversation of the tenant, newest first; another tenant's conversation does not exist. */
export async function listWidgetSessions({ ctx, input }: { ctx: HubContext; input: { tenantId: string; conversationId: string; limit: number } }) {
  const conversation = await ctx.prisma.conversation.findFirst({ where: { id: input.conversationId, tenantId: input.tenantId }, select: { id: true } });
  if (!conversation) throw new AppError("not_found", "No such conversation.");
  return ctx.prisma.widgetSession.findMany({
    where: { tenantId: input.tenantId, conversationId: conversation.id },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    take: Math.min(Math.max(input.limit || 50, 1), 100),
  });
}
