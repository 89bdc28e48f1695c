import { z } from "zod";
import { Cursor, Id } from "@gateway/contract";
import { ConversationEventTypes } from "./conversations.types.js";

/** The conversation hub's webhooks: registration, replay, deliveries. */

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
