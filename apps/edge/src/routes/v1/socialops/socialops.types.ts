import { z } from "zod";
import { Id, listLimitQuery, listPageQuery } from "@gateway/contract";
import { NextCursor } from "../../page.js";

export const SocialOpsAliasParams = z.object({ alias: Id });
export type SocialOpsAliasParams = z.infer<typeof SocialOpsAliasParams>;
export const WebhookParams = z.object({ alias: Id, provider: Id });
export type WebhookParams = z.infer<typeof WebhookParams>;
export const ThreadParams = z.object({ alias: Id, thread_id: Id });
export type ThreadParams = z.infer<typeof ThreadParams>;

export const ListQuery = z.object({ limit: listLimitQuery(200) });
export type ListQuery = z.infer<typeof ListQuery>;

export const SocialEventRequest = z.object({
  event_id: z.string().min(1).max(256).describe("The provider's event id: the same id again is stored once."),
  thread_id: z.string().min(1).max(256).describe("The provider's thread id."),
  subject: z.string().max(512),
  text: z.string().min(1).max(16_384),
  author: z.string().min(1).max(256).optional(),
});
export type SocialEventRequest = z.infer<typeof SocialEventRequest>;
export const SocialEventResponse = z.object({
  data: z.object({
    thread_id: z.string(),
    message_id: z.string(),
    duplicate: z.boolean().optional().describe("Present (true) when the event had been received before."),
  }),
});

export const SocialThreadView = z.object({
  id: z.string(),
  provider: z.string(),
  external_thread_id: z.string(),
  subject: z.string(),
  unread_count: z.number().int().describe("Inbound messages since the last reply."),
  message_count: z.number().int(),
  last_activity_at: z.string(),
  created_at: z.string(),
});
export const SocialThreadListResponse = z.object({ data: z.array(SocialThreadView), next_cursor: NextCursor });
/** Threads as a capped list: newest first by creation when paged (activity reorders the inbox, not pages). */
export const ThreadListQuery = z.strictObject(listPageQuery({ item: "threads", fallback: "the 100 with the newest activity" }));
export type ThreadListQuery = z.infer<typeof ThreadListQuery>;
export const MessageListQuery = z.strictObject(listPageQuery({ item: "messages", fallback: "the first 500, oldest first" }));
export type MessageListQuery = z.infer<typeof MessageListQuery>;

export const SocialMessageView = z.object({
  id: z.string(),
  thread_id: z.string(),
  direction: z.enum(["inbound", "outbound"]),
  event_id: z.string().nullable(),
  author: z.string().nullable(),
  text: z.string(),
  created_at: z.string(),
  delivery: z
    .object({
      state: z.enum(["queued", "delivered", "failed"]),
      attempts: z.number().int(),
      last_status: z.number().int().nullable(),
      error: z.string().nullable(),
      delivered_at: z.string().nullable(),
    })
    .nullable()
    .describe("Replies only."),
});
export const SocialMessageListResponse = z.object({ data: z.array(SocialMessageView), next_cursor: NextCursor });

export const ReplyRequest = z.object({ text: z.string().min(1).max(16_384) });
export type ReplyRequest = z.infer<typeof ReplyRequest>;
export const ReplyResponse = z.object({ data: z.object({ message_id: z.string(), status: z.literal("queued") }) });
