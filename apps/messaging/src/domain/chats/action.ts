import { AppError } from "@gateway/errors";
import { feedEventId } from "../feed/project.js";
import type { HubContext } from "../hub-context.js";
import { findChat } from "./list.js";

export const CHAT_ACTIONS = ["typing", "read", "end"] as const;
export type ChatAction = (typeof CHAT_ACTIONS)[number];

/**
 * A chat action: `typing` and `read` are signals the visitor's widget shows;
 * `end` ends the chat's widget sessions (their tokens stop working at once).
 */
export async function chatAction({ ctx, input }: { ctx: HubContext; input: { tenantId: string; chatId: string; action: string; author: "bot" | "visitor" } }) {
  if (!(CHAT_ACTIONS as readonly string[]).includes(input.action)) throw new AppError("invalid_request", `action must be one of ${CHAT_ACTIONS.join(", ")}.`);
  const chat = await findChat(ctx, input.tenantId, input.chatId);
  const { eventId, revoked } = await ctx.transact(async (tx, emit) => {
    let ended: string[] = [];
    if (input.action === "end") {
      const active = await tx.widgetSession.findMany({ where: { chatId: chat.id, revokedAt: null }, select: { id: true } });
      ended = active.map((s) => s.id);
      await tx.widgetSession.updateMany({ where: { id: { in: ended } }, data: { revokedAt: new Date(), revokedReason: "chat_ended" } });
      for (const id of ended) {
        await emit("session.revoked", {
          tenant_id: chat.tenantId,
          session_id: id,
          chat_id: chat.id,
          conversation_id: chat.conversationId,
          reason: "chat_ended",
        });
      }
    }
    const event = await emit(
      "chat.action",
      { tenant_id: chat.tenantId, chat_id: chat.id, conversation_id: chat.conversationId, action: input.action, author: input.author },
      { view: { chat_id: chat.id, action: input.action, author: input.author } },
    );
    return { eventId: feedEventId(event, "widget"), revoked: ended };
  });
  if (revoked.length > 0) await ctx.announceRevoked(revoked);
  return { chatId: chat.id, action: input.action, eventId };
}
