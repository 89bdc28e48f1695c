import { AppError } from "@gateway/errors";
import type { Tx } from "../../db.js";
import type { HubContext } from "../hub-context.js";

/** A conversation of the tenant, locked for the rest of the transaction; another tenant's does not exist. */
export async function lockConversation(tx: Tx, tenantId: string, id: string) {
  const rows = await tx.$queryRawUnsafe<{ id: string }[]>("SELECT id FROM conversations WHERE id = $1 AND tenant_id = $2 FOR UPDATE", id, tenantId);
  if (rows.length === 0) throw new AppError("not_found", "No such conversation.");
  return tx.conversation.findUniqueOrThrow({ where: { id } });
}

/** A conversation with its participants and channels. */
export async function getConversation({ ctx, input }: { ctx: HubContext; input: { tenantId: string; id: string } }) {
  const conversation = await ctx.prisma.conversation.findFirst({ where: { id: input.id, tenantId: input.tenantId } });
  if (!conversation) throw new AppError("not_found", "No such conversation.");
  const [participants, channels] = await Promise.all([
    ctx.prisma.conversationParticipant.findMany({ where: { conversationId: conversation.id }, orderBy: [{ createdAt: "asc" }, { id: "asc" }] }),
    ctx.prisma.conversationChannel.findMany({ where: { conversationId: conversation.id }, orderBy: [{ createdAt: "asc" }, { id: "asc" }] }),
  ]);
  return { conversation, participants, channels };
}

export type ConversationDetail = Awaited<ReturnType<typeof getConversation>>;

/** The tenant's conversations by latest activity (newest first), optionally of one status. */
export async function listInbox({ ctx, input }: { ctx: HubContext; input: { tenantId: string; status: string; limit: number } }) {
  const conversations = await ctx.prisma.conversation.findMany({
    where: { tenantId: input.tenantId, ...(input.status ? { status: input.status } : {}) },
    orderBy: [{ lastActivityAt: "desc" }, { id: "desc" }],
    take: Math.min(Math.max(input.limit || 50, 1), 100),
  });
  const ids = conversations.map((c) => c.id);
  const participants = await ctx.prisma.conversationParticipant.findMany({
    where: { conversationId: { in: ids } },
    orderBy: [{ createdAt: "asc" }, { id: "asc" }],
  });
  const channels = await ctx.prisma.conversationChannel.findMany({ where: { conversationId: { in: ids } }, orderBy: [{ createdAt: "asc" }, { id: "asc" }] });
  return conversations.map((conversation) => ({
    conversation,
    participants: participants.filter((p) => p.conversationId === conversation.id),
    channels: channels.filter((c) => c.conversationId === conversation.id),
  }));
}
