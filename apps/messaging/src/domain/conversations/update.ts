import { AppError } from "@gateway/errors";
import type { HubContext } from "../hub-context.js";
import { conversationData } from "../views.js";
import { CONVERSATION_STATUSES, parseMetadata } from "./create.js";
import { getConversation, lockConversation, type ConversationDetail } from "./find.js";

/**
 * Changes subject, status or metadata (replaced whole). Every change increments
 * `version`; a `version` other than the current one is a conflict and changes nothing.
 */
export async function updateConversation({
  ctx,
  input,
}: {
  ctx: HubContext;
  input: { tenantId: string; id: string; subject?: string; status: string; metadataJson: string; version?: number };
}): Promise<ConversationDetail> {
  if (input.status && !(CONVERSATION_STATUSES as readonly string[]).includes(input.status)) {
    throw new AppError("invalid_request", `status must be one of ${CONVERSATION_STATUSES.join(", ")}.`);
  }
  if (input.subject !== undefined && input.subject.length > 256) throw new AppError("invalid_request", "subject must be at most 256 characters.");
  const metadata = input.metadataJson ? parseMetadata(input.metadataJson) : undefined;
  await ctx.transact(async (tx, emit) => {
    const current = await lockConversation(tx, input.tenantId, input.id);
    if (input.version !== undefined && input.version !== current.version) {
      throw new AppError("conflict", `version ${input.version} is not the current version (${current.version}).`, { extra: { version: current.version } });
    }
    const updated = await tx.conversation.update({
      where: { id: current.id },
      data: {
        ...(input.subject !== undefined ? { subject: input.subject || null } : {}),
        ...(input.status ? { status: input.status } : {}),
        ...(metadata ? { metadata } : {}),
        version: current.version + 1,
        lastActivityAt: new Date(),
      },
    });
    await emit("conversation.updated", { tenant_id: input.tenantId, conversation_id: current.id }, { view: conversationData(updated) });
  });
  ctx.kickWebhooks();
  return getConversation({ ctx, input: { tenantId: input.tenantId, id: input.id } });
}
