import { AppError } from "@gateway/errors";
import { newId } from "@gateway/contract/ids";
import type { Prisma } from "../../generated/prisma/client.js";
import type { HubContext } from "../hub-context.js";
import { conversationData, participantData } from "../views.js";
import { getConversation, type ConversationDetail } from "./find.js";
import { checkParticipant, type ParticipantInput } from "./participants.js";

export const CONVERSATION_STATUSES = ["open", "pending", "closed"] as const;

export function parseMetadata(json: string): Prisma.InputJsonObject {
  if (!json) return {};
  const value = JSON.parse(json) as unknown;
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new AppError("invalid_request", "metadata must be an object.");
  if (json.length > 16_384) throw new AppError("invalid_request", "metadata must be at most 16 KiB of JSON.");
  return value as Prisma.InputJsonObject;
}

/** A new open conversation, with its first participants. */
export async function createConversation({
  ctx,
  input,
}: {
  ctx: HubContext;
  input: { tenantId: string; subject: string; metadataJson: string; participants: ParticipantInput[] };
}): Promise<ConversationDetail> {
  const metadata = parseMetadata(input.metadataJson);
  if (input.subject.length > 256) throw new AppError("invalid_request", "subject must be at most 256 characters.");
  const participants = input.participants.map(checkParticipant);
  const keys = new Set(participants.map((p) => `${p.kind}:${p.externalId}`));
  if (keys.size !== participants.length) throw new AppError("invalid_request", "participants must not repeat a kind and external_id.");
  const id = await ctx.transact(async (tx, emit) => {
    const conversation = await tx.conversation.create({
      data: { id: newId("conv"), tenantId: input.tenantId, subject: input.subject || null, status: "open", metadata, version: 1 },
    });
    await emit("conversation.created", { tenant_id: input.tenantId, conversation_id: conversation.id }, { view: conversationData(conversation) });
    for (const p of participants) {
      const participant = await tx.conversationParticipant.create({
        data: {
          id: newId("cpt"),
          tenantId: input.tenantId,
          conversationId: conversation.id,
          kind: p.kind,
          externalId: p.externalId,
          displayName: p.displayName,
          role: p.role,
        },
      });
      await emit(
        "participant.added",
        { tenant_id: input.tenantId, conversation_id: conversation.id, participant_id: participant.id },
        { view: participantData(participant) },
      );
    }
    return conversation.id;
  });
  ctx.kickWebhooks();
  return getConversation({ ctx, input: { tenantId: input.tenantId, id } });
}
