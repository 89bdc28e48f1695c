import type { EdgeDeps } from "../../../deps.js";
import { keyPrincipal } from "../../../http/access.js";
import { defineRoute } from "../../../http/route.js";
import { data } from "../../page.js";
import { AddChannelRequest, ChannelParams, ChannelView, UpdateChannelRequest } from "./channels.types.js";
import { ConversationParams } from "./conversations.types.js";
import { channelView } from "./encode.js";
import { TAGS, WRITE } from "./hub-access.js";

export const postChannel = defineRoute<EdgeDeps, ConversationParams, Record<string, never>, AddChannelRequest>({
  method: "post",
  path: "/v1/conversations/:id/channels",
  summary: "Attach a channel: a bot chat (its messages then appear on the conversation feed), a SocialOps thread, or an external reference.",
  tags: TAGS,
  access: WRITE,
  params: ConversationParams,
  body: AddChannelRequest,
  responses: {
    201: { description: "attached", schema: data(ChannelView) },
    404: { description: "no such conversation, or a bot_chat ref that is not a chat of this tenant" },
    409: { description: "the reference is already attached to a conversation" },
  },
  async handler({ deps, params, body, principal }) {
    const c = await deps.services.conversations.AddChannel({
      tenant_id: keyPrincipal(principal).tenantId,
      conversation_id: params.id,
      type: body.type,
      ref: body.ref,
    });
    return { status: 201, body: { data: channelView(c) } };
  },
});

export const patchChannel = defineRoute<EdgeDeps, ChannelParams, Record<string, never>, UpdateChannelRequest>({
  method: "patch",
  path: "/v1/conversations/:id/channels/:channelId",
  summary: "Point a channel at another reference (a bot_chat channel's old chat leaves the conversation, the new one joins it).",
  tags: TAGS,
  access: WRITE,
  params: ChannelParams,
  body: UpdateChannelRequest,
  responses: {
    200: { description: "changed", schema: data(ChannelView) },
    404: { description: "no such conversation or channel, or a bot_chat ref that is not a chat of this tenant" },
    409: { description: "the new reference is already attached to a conversation" },
  },
  async handler({ deps, params, body, principal }) {
    const c = await deps.services.conversations.UpdateChannel({
      tenant_id: keyPrincipal(principal).tenantId,
      conversation_id: params.id,
      channel_id: params.channelId,
      type: body.type ?? "",
      ref: body.ref,
    });
    return { status: 200, body: { data: channelView(c) } };
  },
});

export const deleteChannel = defineRoute<EdgeDeps, ChannelParams>({
  method: "delete",
  path: "/v1/conversations/:id/channels/:channelId",
  summary: "Detach a channel; a bot_chat channel's chat leaves the conversation (its later messages no longer reach the conversation feed).",
  tags: TAGS,
  access: WRITE,
  params: ChannelParams,
  responses: { 204: { description: "removed" }, 404: { description: "no such conversation or channel" } },
  async handler({ deps, params, principal }) {
    await deps.services.conversations.RemoveChannel({ tenant_id: keyPrincipal(principal).tenantId, conversation_id: params.id, channel_id: params.channelId });
    return { status: 204 };
  },
});
