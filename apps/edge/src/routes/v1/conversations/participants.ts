import { data } from "../../page.js";
import { created, forward, noContent, ok } from "../../forward.js";
import { ConversationParams } from "./conversations.types.js";
import { participantView } from "./encode.js";
import { HUB_WRITE, notFound } from "./hub-access.js";
import { AddParticipantRequest, ParticipantParams, ParticipantView, UpdateParticipantRequest } from "./participants.types.js";

export const postParticipant = forward(HUB_WRITE, "post /v1/conversations/:id/participants", {
  summary: "Add a participant (a kind and your external id, unique within the conversation).",
  params: ConversationParams,
  body: AddParticipantRequest,
  responses: { 201: ["added", data(ParticipantView)], 404: notFound, 409: "already a participant" },
  call: ({ deps, params, body: { kind, external_id, display_name, role }, tenantId }) =>
    deps.services.conversations.AddParticipant({
      tenant_id: tenantId,
      conversation_id: params.id,
      kind,
      external_id,
      display_name: display_name ?? "",
      role: role ?? "",
    }),
  answer: (r) => created(participantView(r)),
});

export const patchParticipant = forward(HUB_WRITE, "patch /v1/conversations/:id/participants/:participantId", {
  summary: "Change a participant's role or display name.",
  params: ParticipantParams,
  body: UpdateParticipantRequest,
  responses: { 200: ["updated", data(ParticipantView)], 404: "no such conversation or participant" },
  call: ({ deps, params, body, tenantId }) =>
    deps.services.conversations.UpdateParticipant({
      tenant_id: tenantId,
      conversation_id: params.id,
      participant_id: params.participantId,
      role: body.role ?? "",
      ...(body.display_name !== undefined ? { display_name: body.display_name ?? "" } : {}),
    }),
  answer: (r) => ok(participantView(r)),
});

export const deleteParticipant = forward(HUB_WRITE, "delete /v1/conversations/:id/participants/:participantId", {
  summary: "Remove a participant.",
  params: ParticipantParams,
  responses: { 204: "removed", 404: "no such conversation or participant" },
  call: ({ deps, params, tenantId }) =>
    deps.services.conversations.RemoveParticipant({ tenant_id: tenantId, conversation_id: params.id, participant_id: params.participantId }),
  answer: noContent,
});
