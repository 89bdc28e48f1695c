import type { messaging } from "@gateway/protos";
import { orNull } from "../../page.js";

export const participantView = (p: messaging.Participant__Output) => ({
  id: p.id,
  conversation_id: p.conversation_id,
  kind: p.kind,
  external_id: p.external_id,
  display_name: orNull(p.display_name),
  role: p.role,
  created_at: p.created_at,
  updated_at: p.updated_at,
});

export const channelView = (c: messaging.Channel__Output) => ({
  id: c.id,
  conversation_id: c.conversation_id,
  type: c.type,
  ref: c.ref,
  created_at: c.created_at,
});

export const conversationView = (c: messaging.Conversation__Output) => ({
  id: c.id,
  subject: orNull(c.subject),
  status: c.status,
  metadata: JSON.parse(c.metadata_json || "{}") as Record<string, unknown>,
  version: c.version,
  participants: c.participants.map(participantView),
  channels: c.channels.map(channelView),
  last_activity_at: c.last_activity_at,
  created_at: c.created_at,
  updated_at: c.updated_at,
});

export const webhookView = (w: messaging.Webhook__Output) => ({
  id: w.id,
  url: w.url,
  secret: "[redacted]" as const,
  event_types: w.event_types,
  status: w.status,
  created_at: w.created_at,
  revoked_at: orNull(w.revoked_at),
});

export const deliveryView = (d: messaging.WebhookDelivery__Output) => ({
  id: d.id,
  webhook_id: d.webhook_id,
  event_id: d.event_id,
  event_type: d.event_type,
  cursor: d.cursor,
  state: d.state,
  attempts: d.attempts,
  last_status: d.last_status ?? null,
  last_error: orNull(d.last_error),
  replay: d.replay,
  next_attempt_at: orNull(d.next_attempt_at),
  created_at: d.created_at,
  updated_at: d.updated_at,
});
