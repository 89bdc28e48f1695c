import { z } from "zod";
import type { EdgeDeps } from "../../../deps.js";
import { keyPrincipal } from "../../../http/access.js";
import { defineRoute } from "../../../http/route.js";
import { EventsPage, EventsQuery } from "../bot/events.types.js";
import { data, pageArgs } from "../../page.js";
import { eventsPage } from "../bot/encode.js";
import { ConversationParams, ConversationView, CreateConversationRequest, InboxQuery, UpdateConversationRequest } from "./conversations.types.js";
import { conversationView } from "./encode.js";
import { notFound, READ, TAGS, WRITE } from "./hub-access.js";

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
      ...pageArgs(query, 100),
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
