import { isUniqueViolation } from "@gateway/db-kit";
import { AppError } from "@gateway/errors";
import { newId } from "@gateway/contract/ids";
import type { HubEmit, Tx } from "../../db.js";
import type { HubContext } from "../hub-context.js";
import { channelData, chatData, participantData } from "../views.js";
import { newWidgetRefreshToken } from "./tokens.js";

export type WidgetGrant = {
  sessionId: string;
  chatId: string;
  tenantId: string;
  visitorId: string;
  conversationId: string | null;
  refreshToken: string;
  refreshExpiresAt: Date;
  /** 0 at creation, +1 per rotation: access tokens of older generations are refused. */
  generation: number;
};

export type CreateWidgetSessionInput = { tenantId: string; visitorId: string; displayName: string; botId: string; conversationId: string };

export async function issueRefreshToken(tx: Tx, sessionId: string, ttlSeconds: number): Promise<{ token: string; expiresAt: Date }> {
  const { token, hash } = newWidgetRefreshToken();
  const expiresAt = new Date(Date.now() + ttlSeconds * 1000);
  await tx.widgetRefreshToken.create({ data: { hash, sessionId, expiresAt } });
  return { token, expiresAt };
}

/**
 * A widget session for a visitor: the visitor's chat (the same one on every
 * return: one chat per tenant and visitor_id), a session and its first refresh
 * token. With `conversationId` the chat becomes a channel of that conversation
 * and the visitor one of its participants.
 */
export async function createWidgetSession({ ctx, input }: { ctx: HubContext; input: CreateWidgetSessionInput }): Promise<WidgetGrant> {
  if (input.botId && !(await ctx.prisma.botInstance.findFirst({ where: { id: input.botId, tenantId: input.tenantId } }))) {
    throw new AppError("not_found", "No such bot.");
  }
  if (input.conversationId && !(await ctx.prisma.conversation.findFirst({ where: { id: input.conversationId, tenantId: input.tenantId } }))) {
    throw new AppError("not_found", "No such conversation.");
  }
  const attempt = () =>
    ctx.transact(async (tx, emit) => {
      let chat = await tx.botChat.findUnique({ where: { tenantId_visitorId: { tenantId: input.tenantId, visitorId: input.visitorId } } });
      const fresh = !chat;
      if (!chat) {
        chat = await tx.botChat.create({
          data: {
            id: newId("chat"),
            tenantId: input.tenantId,
            visitorId: input.visitorId,
            botId: input.botId || null,
            displayName: input.displayName || null,
            conversationId: input.conversationId || null,
          },
        });
      } else if (input.displayName && input.displayName !== chat.displayName) {
        chat = await tx.botChat.update({ where: { id: chat.id }, data: { displayName: input.displayName } });
      }
      if (input.conversationId) {
        if (chat.conversationId && chat.conversationId !== input.conversationId) {
          throw new AppError("conflict", "This visitor's chat already belongs to another conversation.");
        }
        if (!chat.conversationId) chat = await tx.botChat.update({ where: { id: chat.id }, data: { conversationId: input.conversationId } });
      }
      const sessionId = newId("wses");
      await tx.widgetSession.create({
        data: {
          id: sessionId,
          tenantId: input.tenantId,
          chatId: chat.id,
          visitorId: input.visitorId,
          displayName: input.displayName || chat.displayName,
          conversationId: input.conversationId || null,
        },
      });
      const refresh = await issueRefreshToken(tx, sessionId, ctx.widgetRefreshTtlSeconds);
      if (input.conversationId) await joinConversation(tx, emit, input, chat.id, sessionId);
      if (fresh) await emit("chat.created", { tenant_id: input.tenantId, chat_id: chat.id, conversation_id: chat.conversationId }, { view: chatData(chat) });
      await emit(
        "session.created",
        { tenant_id: input.tenantId, session_id: sessionId, chat_id: chat.id, conversation_id: chat.conversationId },
        { view: { session_id: sessionId, chat_id: chat.id, visitor_id: input.visitorId } },
      );
      return {
        sessionId,
        chatId: chat.id,
        tenantId: input.tenantId,
        visitorId: input.visitorId,
        conversationId: chat.conversationId,
        refreshToken: refresh.token,
        refreshExpiresAt: refresh.expiresAt,
        generation: 0,
      };
    });
  try {
    const grant = await attempt();
    if (input.conversationId) ctx.kickWebhooks();
    return grant;
  } catch (err) {
    // Two first visits of one visitor at once: the loser finds the winner's chat.
    if (!isUniqueViolation(err)) throw err;
    const grant = await attempt();
    if (input.conversationId) ctx.kickWebhooks();
    return grant;
  }
}

async function joinConversation(tx: Tx, emit: HubEmit, input: CreateWidgetSessionInput, chatId: string, sessionId: string) {
  const conversationId = input.conversationId;
  const channel = await tx.conversationChannel.findUnique({ where: { tenantId_type_ref: { tenantId: input.tenantId, type: "bot_chat", ref: chatId } } });
  if (!channel) {
    const created = await tx.conversationChannel.create({
      data: { id: newId("chn"), tenantId: input.tenantId, conversationId, type: "bot_chat", ref: chatId },
    });
    await emit(
      "channel.added",
      { tenant_id: input.tenantId, conversation_id: conversationId, channel_id: created.id, chat_id: chatId },
      { view: channelData(created) },
    );
  }
  const existing = await tx.conversationParticipant.findUnique({
    where: { conversationId_kind_externalId: { conversationId, kind: "visitor", externalId: input.visitorId } },
  });
  if (!existing) {
    const participant = await tx.conversationParticipant.create({
      data: {
        id: newId("cpt"),
        tenantId: input.tenantId,
        conversationId,
        kind: "visitor",
        externalId: input.visitorId,
        displayName: input.displayName || null,
        role: "member",
      },
    });
    await emit(
      "participant.added",
      { tenant_id: input.tenantId, conversation_id: conversationId, participant_id: participant.id },
      { view: participantData(participant) },
    );
  }
  await tx.conversation.update({ where: { id: conversationId }, data: { lastActivityAt: new Date() } });
  await emit(
    "widget_session.created",
    { tenant_id: input.tenantId, conversation_id: conversationId, session_id: sessionId, chat_id: chatId },
    { view: { session_id: sessionId, chat_id: chatId, visitor_id: input.visitorId, conversation_id: conversationId } },
  );
}
