import { z } from "zod";
import { ExternalId, Id } from "@gateway/contract";
import { DisplayName } from "../bot/widget.types.js";

/** A conversation's participants (docs/decisions/0124). */

const Kind = z.enum(["visitor", "agent", "bot", "external"]);
const Role = z.enum(["member", "owner", "observer"]);

export const ParticipantView = z.object({
  id: z.string(),
  conversation_id: z.string(),
  kind: Kind,
  external_id: z.string(),
  display_name: z.string().nullable(),
  role: Role,
  created_at: z.string(),
  updated_at: z.string(),
});

export const AddParticipantRequest = z.strictObject({
  kind: Kind,
  external_id: ExternalId.describe("Your id of the person or system (unique per kind within a conversation)."),
  display_name: DisplayName.optional(),
  role: Role.optional().describe("Default member."),
});
export type AddParticipantRequest = z.infer<typeof AddParticipantRequest>;

export const UpdateParticipantRequest = z.strictObject({ display_name: DisplayName.nullable().optional(), role: Role.optional() });
export type UpdateParticipantRequest = z.infer<typeof UpdateParticipantRequest>;

export const ParticipantParams = z.object({ id: Id, participantId: Id });
export type ParticipantParams = z.infer<typeof ParticipantParams>;
