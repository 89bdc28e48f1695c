import { isUniqueViolation } from "@gateway/db-kit";
import { AppError } from "@gateway/errors";
import { EXTERNAL_ID_PATTERN } from "@gateway/contract";
import { newId } from "@gateway/contract/ids";
import type { HubContext } from "../hub-context.js";
import { participantData } from "../views.js";
import { lockConversation } from "./find.js";

export const PARTICIPANT_KINDS = ["visitor", "agent", "bot", "external"] as const;
export const PARTICIPANT_ROLES = ["member", "owner", "observer"] as const;

export type ParticipantInput = { kind: string; external_id: string; display_name: string; role: string };
export type CheckedParticipant = { kind: string; externalId: string; displayName: string | null; role: string };

export function checkParticipant(p: ParticipantInput): CheckedParticipant {
  if (!(PARTICIPANT_KINDS as readonly string[]).includes(p.kind))
    throw new AppError("invalid_request", `participant kind must be one of ${PARTICIPANT_KINDS.join(", ")}.`);
  if (!EXTERNAL_ID_PATTERN.test(p.external_id)) throw new AppError("invalid_request", "participant external_id must be 1-128 of A-Z a-z 0-9 . _ : @ -.");
  const role = p.role || "member";
  if (!(PARTICIPANT_ROLES as readonly string[]).includes(role))
    throw new AppError("invalid_request", `participant role must be one of ${PARTICIPANT_ROLES.join(", ")}.`);
  if (p.display_name.length > 128) throw new AppError("invalid_request", "display_name must be at most 128 characters.");
  return { kind: p.kind, externalId: p.external_id, displayName: p.display_name || null, role };
}

export async function addParticipant({ ctx, input }: { ctx: HubContext; input: { tenantId: string; conversationId: string } & ParticipantInput }) {
  const p = checkParticipant(input);
  try {
    const participant = await ctx.transact(async (tx, emit) => {
      await lockConversation(tx, input.tenantId, input.conversationId);
      const created = await tx.conversationParticipant.create({
        data: {
          id: newId("cpt"),
          tenantId: input.tenantId,
          conversationId: input.conversationId,
          kind: p.kind,
          externalId: p.externalId,
          displayName: p.displayName,
          role: p.role,
        },
      });
      await tx.conversation.update({ where: { id: input.conversationId }, data: { lastActivityAt: new Date() } });
      await emit(
        "participant.added",
        { tenant_id: input.tenantId, conversation_id: input.conversationId, participant_id: created.id },
        { view: participantData(created) },
      );
      return created;
    });
    ctx.kickWebhooks();
    return participant;
  } catch (err) {
    if (isUniqueViolation(err)) throw new AppError("conflict", "This participant (kind and external_id) is already in the conversation.");
    throw err;
  }
}

export async function updateParticipant({
  ctx,
  input,
}: {
  ctx: HubContext;
  input: { tenantId: string; conversationId: string; participantId: string; displayName?: string; role: string };
}) {
  if (input.role && !(PARTICIPANT_ROLES as readonly string[]).includes(input.role))
    throw new AppError("invalid_request", `role must be one of ${PARTICIPANT_ROLES.join(", ")}.`);
  if (input.displayName !== undefined && input.displayName.length > 128) throw new AppError("invalid_request", "display_name must be at most 128 characters.");
  const participant = await ctx.transact(async (tx, emit) => {
    await lockConversation(tx, input.tenantId, input.conversationId);
    const current = await tx.conversationParticipant.findFirst({ where: { id: input.participantId, conversationId: input.conversationId } });
    if (!current) throw new AppError("not_found", "No such participant in this conversation.");
    const updated = await tx.conversationParticipant.update({
      where: { id: current.id },
      data: { ...(input.role ? { role: input.role } : {}), ...(input.displayName !== undefined ? { displayName: input.displayName || null } : {}) },
    });
    await tx.conversation.update({ where: { id: input.conversationId }, data: { lastActivityAt: new Date() } });
    await emit(
      "participant.updated",
      { tenant_id: input.tenantId, conversation_id: input.conversationId, participant_id: current.id },
      { view: participantData(updated) },
    );
    return updated;
  });
  ctx.kickWebhooks();
  return participant;
}

export async function removeParticipant({ ctx, input }: { ctx: HubContext; input: { tenantId: string; conversationId: string; participantId: string } }) {
  await ctx.transact(async (tx, emit) => {
    await lockConversation(tx, input.tenantId, input.conversationId);
    const current = await tx.conversationParticipant.findFirst({ where: { id: input.participantId, conversationId: input.conversationId } });
    if (!current) throw new AppError("not_found", "No such participant in this conversation.");
    await tx.conversationParticipant.delete({ where: { id: current.id } });
    await tx.conversation.update({ where: { id: input.conversationId }, data: { lastActivityAt: new Date() } });
    await emit(
      "participant.removed",
      { tenant_id: input.tenantId, conversation_id: input.conversationId, participant_id: current.id },
      { view: participantData(current) },
    );
  });
  ctx.kickWebhooks();
}
