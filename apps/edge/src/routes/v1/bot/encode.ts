import type { messaging } from "@gateway/protos";
import { orNull } from "../../page.js";

export const botView = (b: messaging.Bot__Output) => ({ id: b.id, name: b.name, welcome_message: orNull(b.welcome_message), created_at: b.created_at });

export const chatView = (c: messaging.Chat__Output) => ({
  id: c.id,
  bot_id: orNull(c.bot_id),
  visitor_id: c.visitor_id,
  display_name: orNull(c.display_name),
  conversation_id: orNull(c.conversation_id),
  last_message_at: orNull(c.last_message_at),
  created_at: c.created_at,
});

export const messageView = (m: messaging.BotMessage__Output) => ({
  id: m.id,
  chat_id: m.chat_id,
  author: m.author,
  kind: m.kind,
  text: m.deleted ? null : orNull(m.text),
  file_id: m.deleted ? null : orNull(m.file_id),
  reply_to_message_id: orNull(m.reply_to_message_id),
  deleted: m.deleted,
  edited_at: orNull(m.edited_at),
  created_at: m.created_at,
});

export const eventView = (e: messaging.StreamEvent__Output) => ({
  id: e.id,
  cursor: e.cursor,
  type: e.type,
  chat_id: orNull(e.chat_id),
  conversation_id: orNull(e.conversation_id),
  data: JSON.parse(e.data_json) as unknown,
  created_at: e.created_at,
});

export const eventsPage = (res: messaging.ListEventsResponse__Output) => ({ data: { events: res.events.map(eventView), next_cursor: res.next_cursor } });
