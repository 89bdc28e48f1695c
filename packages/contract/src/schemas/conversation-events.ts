/**
 * The kinds of the conversation feed (`GET /v1/conversations/events`) and of conversation
 * webhooks, in the contract's order (docs/decisions/0124): what the edge accepts as a
 * webhook's `event_types`, and what messaging's projection writes to the conversation
 * stream (its test holds the projection to this list).
 */
export const CONVERSATION_EVENT_KINDS = [
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
] as const;
