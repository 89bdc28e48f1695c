import { z } from "zod";
import { Id, listLimitQuery } from "@gateway/contract";

/** A bot's chats and their actions (docs/decisions/0122). */

export const ChatView = z.object({
  id: z.string(),
  bot_id: z.string().nullable(),
  visitor_id: z.string(),
  display_name: z.string().nullable(),
  conversation_id: z.string().nullable().describe("The conversation this chat is a channel of, if any."),
  last_message_at: z.string().nullable(),
  created_at: z.string(),
});

export const ListQuery = z.strictObject({ limit: listLimitQuery(100) });
export const ChatsQuery = ListQuery.extend({ bot_id: Id.optional() });
export type ChatsQuery = z.infer<typeof ChatsQuery>;
export const ChatParams = z.object({ chatId: Id });
export type ChatParams = z.infer<typeof ChatParams>;

export const ActionRequest = z.strictObject({
  action: z.enum(["typing", "read", "end"]).describe("`typing` and `read` are shown by the widget; `end` ends the chat's widget sessions at once."),
});
export type ActionRequest = z.infer<typeof ActionRequest>;
export const ActionView = z.object({ chat_id: z.string(), action: z.string(), event_id: z.string() });
