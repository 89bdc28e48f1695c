import { z } from "zod";
import type { EdgeDeps } from "../../../deps.js";
import { keyPrincipal } from "../../../http/access.js";
import { defineRoute } from "../../../http/route.js";
import { data, EventsPage, EventsQuery, WidgetGrantView } from "../bot/bot.types.js";
import { eventsPage } from "../bot/encode.js";
import { grantView } from "../bot/widget.js";
import {
  AddChannelRequest,
  AddParticipantRequest,
  ChannelParams,
  ChannelView,
  ConversationParams,
  ConversationView,
  CreateConversationRequest,
  InboxQuery,
  ParticipantParams,
  ParticipantView,
  UpdateChannelRequest,
  UpdateConversationRequest,
  UpdateParticipantRequest,
  WidgetSessionRequest,
} from "./conversations.types.js";
import { channelView, conversationView, participantView } from "./encode.js";

const READ = { kind: "apiKey", scope: "conversation:read" } as const;
const WRITE = { kind: "apiKey", scope: "conversation:write" } as const;
const TAGS = ["conversations"];
const notFound = { description: "no such conversation of this tenant" };

export const postConversation = defineRoute<EdgeDeps, Record<string, never>, Record<string, never>, CreateConversationRequest>({
  method: "post",
  path: "/v1/conversations",
  summary: "Open a conversation, optionally with its first participants.",
  tags: TAGS,
  access: WRITE,
  body: CreateConversationRequest,
  responses: { 201: { description: "created", schema: data(ConversationView) } },
  async handler({ deps, body, principal }) {
    const c = await deps.services.conversations.CreateConversation({
      tenant_id: keyPrincipal(principal).tenantId,
      subject: body.subject ?? "",
      metadata_json: body.metadata ? JSON.stringify(body.metadata) : "",
      participants: (body.participants ?? []).map((p) => ({
        tenant_id: "",
        conversation_id: "",
        kind: p.kind,
        external_id: p.external_id,
        display_name: p.display_name ?? "",
        role: p.role ?? "",
      })),
    });
    return { status: 201, body: { data: conversationView(c) } };
  },
});

export const getInbox = defineRoute<EdgeDeps, Record<string, never>, InboxQuery>({
  method: "get",
  path: "/v1/conversations/inbox",
  summary: "The tenant's conversations, most recent activity first (optionally of one status).",
  tags: TAGS,
  access: READ,
  query: InboxQuery,
  responses: { 200: { description: "conversations", schema: data(z.array(ConversationView)) } },
  async handler({ deps, query, principal }) {
    const res = await deps.services.conversations.ListInbox({
      tenant_id: keyPrincipal(principal).tenantId,
      status: query.status ?? "",
      limit: query.limit ?? 50,
    });
    return { status: 200, body: { data: res.conversations.map(conversationView) } };
  },
});

export const getConversationEvents = defineRoute<EdgeDeps, Record<string, never>, EventsQuery>({
  method: "get",
  path: "/v1/conversations/events",
  summary: "Conversation events after a cursor, in commit order; paging on from next_cursor never skips or repeats an event.",
  tags: TAGS,
  access: READ,
  query: EventsQuery,
  responses: { 200: { description: "a page of events", schema: EventsPage }, 400: { description: "not a cursor of this feed" } },
  async handler({ deps, query, principal }) {
    const res = await deps.services.conversations.ListEvents({
      tenant_id: keyPrincipal(principal).tenantId,
      stream: "conversation",
      cursor: query.cursor ?? "",
      limit: query.limit ?? 100,
      chat_id: "",
    });
    return { status: 200, body: eventsPage(res) };
  },
});

export const getConversation = defineRoute<EdgeDeps, ConversationParams>({
  method: "get",
  path: "/v1/conversations/:id",
  summary: "One conversation with its participants and channels.",
  tags: TAGS,
  access: READ,
  params: ConversationParams,
  responses: { 200: { description: "the conversation", schema: data(ConversationView) }, 404: notFound },
  async handler({ deps, params, principal }) {
    const c = await deps.services.conversations.GetConversation({ tenant_id: keyPrincipal(principal).tenantId, id: params.id });
    return { status: 200, body: { data: conversationView(c) } };
  },
});

export const patchConversation = defineRoute<EdgeDeps, ConversationParams, Record<string, never>, UpdateConversationRequest>({
  method: "patch",
  path: "/v1/conversations/:id",
  summary: "Change subject, status or metadata; `version`, when sent, must be the current one (else 409).",
  tags: TAGS,
  access: WRITE,
  params: ConversationParams,
  body: UpdateConversationRequest,
  responses: { 200: { description: "updated", schema: data(ConversationView) }, 404: notFound, 409: { description: "stale version" } },
  async handler({ deps, params, body, principal }) {
    const c = await deps.services.conversations.UpdateConversation({
      tenant_id: keyPrincipal(principal).tenantId,
      id: params.id,
      status: body.status ?? "",
      metadata_json: body.metadata ? JSON.stringify(body.metadata) : "",
      ...(body.subject !== undefined ? { subject: body.subject ?? "" } : {}),
      ...(body.version !== undefined ? { version: body.version } : {}),
    });
    return { status: 200, body: { data: conversationView(c) } };
  },
});

export const postParticipant = defineRoute<EdgeDeps, ConversationParams, Record<string, never>, AddParticipantRequest>({
  method: "post",
  path: "/v1/conversations/:id/participants",
  summary: "Add a participant (a kind and your external id, unique within the conversation).",
  tags: TAGS,
  access: WRITE,
  params: ConversationParams,
  body: AddParticipantRequest,
  responses: { 201: { description: "added", schema: data(ParticipantView) }, 404: notFound, 409: { description: "already a participant" } },
  async handler({ deps, params, body, principal }) {
    const p = await deps.services.conversations.AddParticipant({
      tenant_id: keyPrincipal(principal).tenantId,
      conversation_id: params.id,
      kind: body.kind,
      external_id: body.external_id,
      display_name: body.display_name ?? "",
      role: body.role ?? "",
    });
    return { status: 201, body: { data: participantView(p) } };
  },
});

export const patchParticipant = defineRoute<EdgeDeps, ParticipantParams, Record<string, never>, UpdateParticipantRequest>({
  method: "patch",
  path: "/v1/conversations/:id/participants/:participantId",
  summary: "Change a participant's role or display name.",
  tags: TAGS,
  access: WRITE,
  params: ParticipantParams,
  body: UpdateParticipantRequest,
  responses: { 200: { description: "updated", schema: data(ParticipantView) }, 404: { description: "no such conversation or participant" } },
  async handler({ deps, params, body, principal }) {
    const p = await deps.services.conversations.UpdateParticipant({
      tenant_id: keyPrincipal(principal).tenantId,
      conversation_id: params.id,
      participant_id: params.participantId,
      role: body.role ?? "",
      ...(body.display_name !== undefined ? { display_name: body.display_name ?? "" } : {}),
    });
    return { status: 200, body: { data: participantView(p) } };
  },
});

export const deleteParticipant = defineRoute<EdgeDeps, ParticipantParams>({
  method: "delete",
  path: "/v1/conversations/:id/participants/:participantId",
  summary: "Remove a participant.",
  tags: TAGS,
  access: WRITE,
  params: ParticipantParams,
  responses: { 204: { description: "removed" }, 404: { description: "no such conversation or participant" } },
  async handler({ deps, params, principal }) {
    await deps.services.conversations.RemoveParticipant({
      tenant_id: keyPrincipal(principal).tenantId,
      conversation_id: params.id,
      participant_id: params.participantId,
    });
    return { status: 204 };
  },
});

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

export const postWidgetSession = defineRoute<EdgeDeps, ConversationParams, Record<string, never>, WidgetSessionRequest>({
  method: "post",
  path: "/v1/conversations/:id/widget-session",
  summary: "Open a widget session in a conversation: the visitor's chat becomes its channel and the visitor a participant.",
  tags: TAGS,
  access: WRITE,
  params: ConversationParams,
  body: WidgetSessionRequest,
  responses: {
    201: { description: "session opened", schema: data(WidgetGrantView) },
    404: notFound,
    409: { description: "the visitor's chat belongs to another conversation" },
  },
  async handler({ deps, params, body, principal }) {
    const grant = await deps.services.conversations.CreateWidgetSession({
      tenant_id: keyPrincipal(principal).tenantId,
      visitor_id: body.visitor_id,
      display_name: body.display_name ?? "",
      bot_id: "",
      conversation_id: params.id,
    });
    return { status: 201, body: { data: grantView(deps, grant) } };
  },
});
