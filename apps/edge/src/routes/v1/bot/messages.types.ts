import { z } from "zod";
import { FileId, Id } from "@gateway/contract";
import { ListQuery } from "./chats.types.js";

/** A chat's messages as the bot reads and writes them (docs/decisions/0122). */

const Text = z.string().min(1).max(4096);
const OptionalId = Id.optional();

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

export const MessagesQuery = ListQuery.extend({ after: OptionalId.describe("Continue after this message id (exclusive).") });
export type MessagesQuery = z.infer<typeof MessagesQuery>;
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
