import { z } from "zod";
import { Cursor, ExternalId, Id, listLimitQuery } from "@gateway/contract-schemas";
import { DisplayName } from "../bot/bot.types.js";

/** Request/response schemas of the conversation hub (docs/decisions/0124). */

const Kind = z.enum(["visitor", "agent", "bot", "external"]);
const Role = z.enum(["member", "owner", "observer"]);
const Metadata = z.record(z.string(), z.unknown()).describe("Your own data (a JSON object, at most 16 KiB); replaced whole on update.");
export const ConversationEventTypes = z.enum([
  "conversation.created",
  "conversation.updated",
  "participant.added",
  "participant.updated",
  "participant.removed",
  "channel.added",
  "channel.updated",
  "channel.removed",
  "widget_session.created",
  "message.created",
  "message.updated",
  "message.deleted",
]);

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

export const ChannelView = z.object({
  id: z.string(),
  conversation_id: z.string(),
  type: z.enum(["bot_chat", "socialops", "external"]),
  ref: z.string(),
  created_at: z.string(),
});

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

export const AddParticipantRequest = z.strictObject({
  kind: Kind,
  external_id: ExternalId.describe("Your id of the person or system (unique per kind within a conversation)."),
  display_name: DisplayName.optional(),
  role: Role.optional().describe("Default member."),
});
export type AddParticipantRequest = z.infer<typeof AddParticipantRequest>;

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

export const UpdateParticipantRequest = z.strictObject({ display_name: DisplayName.nullable().optional(), role: Role.optional() });
export type UpdateParticipantRequest = z.infer<typeof UpdateParticipantRequest>;

export const AddChannelRequest = z.strictObject({
  type: z.enum(["bot_chat", "socialops", "external"]),
  ref: z.string().min(1).max(256).describe("bot_chat: a chat id of your bot; socialops: a thread id; external: your reference."),
});
export type AddChannelRequest = z.infer<typeof AddChannelRequest>;

export const UpdateChannelRequest = z.strictObject({
  type: AddChannelRequest.shape.type.optional().describe("Absent: the channel keeps its type."),
  ref: AddChannelRequest.shape.ref,
});
export type UpdateChannelRequest = z.infer<typeof UpdateChannelRequest>;

export const WidgetSessionRequest = z.strictObject({ visitor_id: ExternalId, display_name: DisplayName.optional() });
export type WidgetSessionRequest = z.infer<typeof WidgetSessionRequest>;

export const InboxQuery = z.strictObject({
  status: z.enum(["open", "pending", "closed"]).optional(),
  limit: listLimitQuery(100).describe("Default 50."),
});
export type InboxQuery = z.infer<typeof InboxQuery>;

export const ConversationParams = z.object({ id: Id });
export type ConversationParams = z.infer<typeof ConversationParams>;
export const ParticipantParams = z.object({ id: Id, participantId: Id });
export type ParticipantParams = z.infer<typeof ParticipantParams>;
export const ChannelParams = z.object({ id: Id, channelId: Id });
export type ChannelParams = z.infer<typeof ChannelParams>;
export const WebhookParams = z.object({ webhookId: Id });
export type WebhookParams = z.infer<typeof WebhookParams>;

export const RegisterWebhookRequest = z.strictObject({
  url: z.string().min(1).max(2048).describe("HTTPS URL on a public address."),
  secret: z.string().min(16).max(256).describe("Signs every delivery (X-Service-Signature); stored encrypted, never returned."),
  event_types: z.array(ConversationEventTypes).max(20).optional().describe("Only these kinds; absent or empty: all."),
});
export type RegisterWebhookRequest = z.infer<typeof RegisterWebhookRequest>;

export const WebhookView = z.object({
  id: z.string(),
  url: z.string(),
  secret: z.literal("[redacted]"),
  event_types: z.array(z.string()),
  status: z.enum(["active", "revoked"]),
  created_at: z.string(),
  revoked_at: z.string().nullable(),
});

export const ReplayRequest = z.strictObject({
  cursor: Cursor.optional().describe("Replay the events after this cursor; absent: from the start."),
  limit: z.number().int().min(1).max(1000).optional().describe("At most this many events (default and maximum 1000); continue from next_cursor."),
});
export type ReplayRequest = z.infer<typeof ReplayRequest>;
export const ReplayView = z.object({ webhook_id: z.string(), from_cursor: z.string(), next_cursor: z.string(), queued: z.number().int() });

export const DeliveryView = z.object({
  id: z.string(),
  webhook_id: z.string(),
  event_id: z.string(),
  event_type: z.string(),
  cursor: z.string(),
  state: z.enum(["pending", "delivered", "exhausted", "canceled"]),
  attempts: z.number().int(),
  last_status: z.number().int().nullable(),
  last_error: z.string().nullable(),
  replay: z.boolean(),
  next_attempt_at: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});
