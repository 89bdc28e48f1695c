import { data } from "../../page.js";
import { created, forward, noContent, ok } from "../../forward.js";
import { AddChannelRequest, ChannelParams, ChannelView, UpdateChannelRequest } from "./channels.types.js";
import { ConversationParams } from "./conversations.types.js";
import { channelView } from "./encode.js";
import { HUB_WRITE } from "./hub-access.js";

export const postChannel = forward(HUB_WRITE, "post /v1/conversations/:id/channels", {
  summary: "Attach a channel: a bot chat (its messages then appear on the conversation feed), a SocialOps thread, or an external reference.",
  params: ConversationParams,
  body: AddChannelRequest,
  responses: {
    201: ["attached", data(ChannelView)],
    404: "no such conversation, or a bot_chat ref that is not a chat of this tenant",
    409: "the reference is already attached to a conversation",
  },
  call: ({ deps, params, body, tenantId }) =>
    deps.services.conversations.AddChannel({ tenant_id: tenantId, conversation_id: params.id, type: body.type, ref: body.ref }),
  answer: (r) => created(channelView(r)),
});

export const patchChannel = forward(HUB_WRITE, "patch /v1/conversations/:id/channels/:channelId", {
  summary: "Point a channel at another reference (a bot_chat channel's old chat leaves the conversation, the new one joins it).",
  params: ChannelParams,
  body: UpdateChannelRequest,
  responses: {
    200: ["changed", data(ChannelView)],
    404: "no such conversation or channel, or a bot_chat ref that is not a chat of this tenant",
    409: "the new reference is already attached to a conversation",
  },
  call: ({ deps, params, body, tenantId }) =>
    deps.services.conversations.UpdateChannel({
      tenant_id: tenantId,
      conversation_id: params.id,
      channel_id: params.channelId,
      type: body.type ?? "",
      ref: body.ref,
    }),
  answer: (r) => ok(channelView(r)),
});

export const deleteChannel = forward(HUB_WRITE, "delete /v1/conversations/:id/channels/:channelId", {
  summary: "Detach a channel; a bot_chat channel's chat leaves the conversation (its later messages no longer reach the conversation feed).",
  params: ChannelParams,
  responses: { 204: "removed", 404: "no such conversation or channel" },
  call: ({ deps, params, tenantId }) =>
    deps.services.conversations.RemoveChannel({ tenant_id: tenantId, conversation_id: params.id, channel_id: params.channelId }),
  answer: noContent,
});
