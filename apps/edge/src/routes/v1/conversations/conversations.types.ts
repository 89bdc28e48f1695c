import { z } from "zod";
import { CONVERSATION_EVENT_KINDS, Id, listLimitQuery } from "@gateway/contract";
import { ChannelView } from "./channels.types.js";
import { AddParticipantRequest, ParticipantView } from "./participants.types.js";

/** Request/response schemas of the conversation hub (docs/decisions/0124). */

const Metadata = z.record(z.string(), z.unknown()).describe("Your own data (a JSON object, at most 16 KiB); replaced whole on update.");
export const ConversationEventTypes = z.enum(CONVERSATION_EVENT_KINDS);

export const ConversationView = z.object({
  id: z.string(),
  subject: z.string().nullable(),
  status: z.enum(["open", "pending", "closed"]),
  metadata: z.record(z.string(), z.unknown()),
  version: z.number().int().describe("Counts every change; send it back on PATCH to detect concurrent edits (409)."),
  participants: z.array(ParticipantView),
  channels: z.array(ChannelView),
  last_activity_at: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
});

export const CreateConversationRequest = z.strictObject({
  subject: z.string().max(256).optional(),
  metadata: Metadata.optional(),
  participants: z.array(AddParticipantRequest).max(50).optional(),
});
export type CreateConversationRequest = z.infer<typeof CreateConversationRequest>;

export const UpdateConversationRequest = z.strictObject({
  subject: z.string().max(256).nullable().optional(),
  status: z.enum(["open", "pending", "closed"]).optional(),
  metadata: Metadata.optional(),
  version: z.number().int().min(1).optional(),
});
export type UpdateConversationRequest = z.infer<typeof UpdateConversationRequest>;

export const InboxQuery = z.strictObject({
  status: z.enum(["open", "pending", "closed"]).optional(),
  limit: listLimitQuery(100).describe("Default 50."),
});
export type InboxQuery = z.infer<typeof InboxQuery>;

export const ConversationParams = z.object({ id: Id });
export type ConversationParams = z.infer<typeof ConversationParams>;
