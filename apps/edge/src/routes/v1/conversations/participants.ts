import type { EdgeDeps } from "../../../deps.js";
import { keyPrincipal } from "../../../http/access.js";
import { defineRoute } from "../../../http/route.js";
import { data } from "../../page.js";
import { ConversationParams } from "./conversations.types.js";
import { participantView } from "./encode.js";
import { notFound, TAGS, WRITE } from "./hub-access.js";
import { AddParticipantRequest, ParticipantParams, ParticipantView, UpdateParticipantRequest } from "./participants.types.js";

export const postParticipant = defineRoute<EdgeDeps, ConversationParams, Record<string, never>, AddParticipantRequest>({
  method: "post",
  path: "/v1/conversations/:id/participants",
  summary: "Add a participant (a kind and your external id, unique within the conversation).",
  tags: TAGS,
  access: WRITE,
  params: ConversationParams,
  body: AddParticipantRequest,
  responses: { 201: { description: "added", schema: data(ParticipantView) }, 404: notFound, 409: { description: "already a participant" } },
  async handler({ deps, params, body, principal }) {
    const p = await deps.services.conversations.AddParticipant({
      tenant_id: keyPrincipal(principal).tenantId,
      conversation_id: params.id,
      kind: body.kind,
      external_id: body.external_id,
      display_name: body.display_name ?? "",
      role: body.role ?? "",
    });
    return { status: 201, body: { data: participantView(p) } };
  },
});

export const patchParticipant = defineRoute<EdgeDeps, ParticipantParams, Record<string, never>, UpdateParticipantRequest>({
  method: "patch",
  path: "/v1/conversations/:id/participants/:participantId",
  summary: "Change a participant's role or display name.",
  tags: TAGS,
  access: WRITE,
  params: ParticipantParams,
  body: UpdateParticipantRequest,
  responses: { 200: { description: "updated", schema: data(ParticipantView) }, 404: { description: "no such conversation or participant" } },
  async handler({ deps, params, body, principal }) {
    const p = await deps.services.conversations.UpdateParticipant({
      tenant_id: keyPrincipal(principal).tenantId,
      conversation_id: params.id,
      participant_id: params.participantId,
      role: body.role ?? "",
      ...(body.display_name !== undefined ? { display_name: body.display_name ?? "" } : {}),
    });
    return { status: 200, body: { data: participantView(p) } };
  },
});

export const deleteParticipant = defineRoute<EdgeDeps, ParticipantParams>({
  method: "delete",
  path: "/v1/conversations/:id/participants/:participantId",
  summary: "Remove a participant.",
  tags: TAGS,
  access: WRITE,
  params: ParticipantParams,
  responses: { 204: { description: "removed" }, 404: { description: "no such conversation or participant" } },
  async handler({ deps, params, principal }) {
    await deps.services.conversations.RemoveParticipant({
      tenant_id: keyPrincipal(principal).tenantId,
      conversation_id: params.id,
      participant_id: params.participantId,
    });
    return { status: 204 };
  },
});
