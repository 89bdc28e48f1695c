import { z } from "zod";
import { Id } from "@gateway/contract";

/** A conversation's channels: a bot chat, a SocialOps thread or an external reference (docs/decisions/0124, 0195). */

export const ChannelView = z.object({
  id: z.string(),
  conversation_id: z.string(),
  type: z.enum(["bot_chat", "socialops", "external"]),
  ref: z.string(),
  created_at: z.string(),
});

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

export const ChannelParams = z.object({ id: Id, channelId: Id });
export type ChannelParams = z.infer<typeof ChannelParams>;
