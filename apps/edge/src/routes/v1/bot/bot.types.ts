import { z } from "zod";
import { cursorPageQuery, ExternalId, FileId, Id, listLimitQuery } from "@gateway/contract-schemas";

/** Request/response schemas of the bot and widget routes (docs/decisions/0122). */

const Text = z.string().min(1).max(4096);
const OptionalId = Id.optional();
export const DisplayName = z.string().trim().min(1).max(128);

export const BotView = z.object({ id: z.string(), name: z.string(), welcome_message: z.string().nullable(), created_at: z.string() });
export const CreateBotRequest = z.strictObject({ name: z.string().trim().min(1).max(128), welcome_message: z.string().max(4096).optional() });
export type CreateBotRequest = z.infer<typeof CreateBotRequest>;

export const ChatView = z.object({
  id: z.string(),
  bot_id: z.string().nullable(),
  visitor_id: z.string(),
  display_name: z.string().nullable(),
  conversation_id: z.string().nullable().describe("The conversation this chat is a channel of, if any."),
  last_message_at: z.string().nullable(),
  created_at: z.string(),
});

export const MessageView = z.object({
  id: z.string(),
  chat_id: z.string(),
  author: z.enum(["bot", "visitor"]),
  kind: z.enum(["text", "file"]),
  text: z.string().nullable().describe("The text, or a file message's caption; null once deleted."),
  file_id: z.string().nullable().describe("A file of the files service (file messages)."),
  reply_to_message_id: z.string().nullable(),
  deleted: z.boolean(),
  edited_at: z.string().nullable(),
  created_at: z.string(),
});

export const ListQuery = z.strictObject({ limit: listLimitQuery(100) });
export const ChatsQuery = ListQuery.extend({ bot_id: OptionalId });
export type ChatsQuery = z.infer<typeof ChatsQuery>;
export const MessagesQuery = ListQuery.extend({ after: OptionalId.describe("Continue after this message id (exclusive).") });
export type MessagesQuery = z.infer<typeof MessagesQuery>;
export const ChatParams = z.object({ chatId: Id });
export type ChatParams = z.infer<typeof ChatParams>;
export const MessageParams = z.object({ messageId: Id });
export type MessageParams = z.infer<typeof MessageParams>;

export const ReplyRequest = z.strictObject({ chat_id: Id, text: Text, reply_to_message_id: OptionalId });
export type ReplyRequest = z.infer<typeof ReplyRequest>;
export const FileMessageRequest = z.strictObject({
  chat_id: Id,
  file_id: FileId,
  caption: z.string().max(4096).optional(),
  reply_to_message_id: OptionalId,
});
export type FileMessageRequest = z.infer<typeof FileMessageRequest>;
export const EditMessageRequest = z.strictObject({ text: Text });
export type EditMessageRequest = z.infer<typeof EditMessageRequest>;
export const ActionRequest = z.strictObject({
  action: z.enum(["typing", "read", "end"]).describe("`typing` and `read` are shown by the widget; `end` ends the chat's widget sessions at once."),
});
export type ActionRequest = z.infer<typeof ActionRequest>;
export const ActionView = z.object({ chat_id: z.string(), action: z.string(), event_id: z.string() });

export const WidgetAuthRequest = z.strictObject({
  visitor_id: ExternalId.describe("Your stable id for the visitor; the same visitor gets the same chat back."),
  display_name: DisplayName.optional(),
  bot_id: OptionalId.describe("The bot the chat is with (optional)."),
});
export type WidgetAuthRequest = z.infer<typeof WidgetAuthRequest>;
export const WidgetGrantView = z.object({
  token: z.string().describe("Widget access token (JWT, at most 15 minutes); only widget routes accept it. Send as Authorization: Bearer."),
  refresh_token: z.string().describe("One use only; presenting a used one ends the session."),
  token_type: z.literal("Bearer"),
  expires_in: z.number().int(),
  chat_id: z.string(),
  session_id: z.string(),
  conversation_id: z.string().nullable(),
});
export const WidgetRefreshRequest = z.strictObject({ refresh_token: z.string().min(1).max(512) });
export type WidgetRefreshRequest = z.infer<typeof WidgetRefreshRequest>;
export const WidgetTokenView = z.object({
  session_id: z.string(),
  chat_id: z.string(),
  visitor_id: z.string(),
  conversation_id: z.string().nullable(),
  expires_at: z.string().describe("When this access token expires."),
});

export const EventView = z.object({
  id: z.string().describe("Stable event id (also X-Service-Event-Id of webhook deliveries)."),
  cursor: z.string().describe("This event's position; pass it as `cursor` to continue after it."),
  type: z.string(),
  chat_id: z.string().nullable(),
  conversation_id: z.string().nullable(),
  data: z.unknown(),
  created_at: z.string(),
});
export const EventsQuery = cursorPageQuery({ max: 100, item: "event" });
export type EventsQuery = z.infer<typeof EventsQuery>;
export const EventsPage = z.object({ data: z.object({ events: z.array(EventView), next_cursor: z.string() }) });

export const WidgetMessageRequest = z
  .strictObject({ text: z.string().max(4096).optional(), file_id: FileId.optional() })
  .refine((b) => (b.text !== undefined && b.text.length > 0) || b.file_id !== undefined, "text or file_id is required");
export type WidgetMessageRequest = z.infer<typeof WidgetMessageRequest>;
