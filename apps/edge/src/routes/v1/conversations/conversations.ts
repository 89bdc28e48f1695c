import { z } from "zod";
import { EventsPage, EventsQuery } from "../bot/events.types.js";
import { data, pageArgs } from "../../page.js";
import { created, forward, ok } from "../../forward.js";
import { eventsPage } from "../bot/encode.js";
import { ConversationParams, ConversationView, CreateConversationRequest, InboxQuery, UpdateConversationRequest } from "./conversations.types.js";
import { conversationView } from "./encode.js";
import { HUB_READ, HUB_WRITE, notFound } from "./hub-access.js";

export const postConversation = forward(HUB_WRITE, "post /v1/conversations", {
  summary: "Open a conversation, optionally with its first participants.",
  body: CreateConversationRequest,
  responses: { 201: ["created", data(ConversationView)] },
  call: ({ deps, body, tenantId }) =>
    deps.services.conversations.CreateConversation({
      tenant_id: tenantId,
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
    }),
  answer: (r) => created(conversationView(r)),
});

export const getInbox = forward(HUB_READ, "get /v1/conversations/inbox", {
  summary: "The tenant's conversations, most recent activity first (optionally of one status).",
  query: InboxQuery,
  responses: { 200: ["conversations", data(z.array(ConversationView))] },
  call: ({ deps, query, tenantId }) => deps.services.conversations.ListInbox({ tenant_id: tenantId, status: query.status ?? "", limit: query.limit ?? 50 }),
  answer: (res) => ok(res.conversations.map(conversationView)),
});

export const getConversationEvents = forward(HUB_READ, "get /v1/conversations/events", {
  summary: "Conversation events after a cursor, in commit order; paging on from next_cursor never skips or repeats an event.",
  query: EventsQuery,
  responses: { 200: ["a page of events", EventsPage], 400: "not a cursor of this feed" },
  call: ({ deps, query, tenantId }) =>
    deps.services.conversations.ListEvents({ tenant_id: tenantId, stream: "conversation", ...pageArgs(query, 100), chat_id: "" }),
  answer: (res) => ({ status: 200, body: eventsPage(res) }),
});

export const getConversation = forward(HUB_READ, "get /v1/conversations/:id", {
  summary: "One conversation with its participants and channels.",
  params: ConversationParams,
  responses: { 200: ["the conversation", data(ConversationView)], 404: notFound },
  call: ({ deps, params, tenantId }) => deps.services.conversations.GetConversation({ tenant_id: tenantId, id: params.id }),
  answer: (r) => ok(conversationView(r)),
});

export const patchConversation = forward(HUB_WRITE, "patch /v1/conversations/:id", {
  summary: "Change subject, status or metadata; `version`, when sent, must be the current one (else 409).",
  params: ConversationParams,
  body: UpdateConversationRequest,
  responses: { 200: ["updated", data(ConversationView)], 404: notFound, 409: "stale version" },
  call: ({ deps, params, body, tenantId }) =>
    deps.services.conversations.UpdateConversation({
      tenant_id: tenantId,
      id: params.id,
      status: body.status ?? "",
      metadata_json: body.metadata ? JSON.stringify(body.metadata) : "",
      ...(body.subject !== undefined ? { subject: body.subject ?? "" } : {}),
      ...(body.version !== undefined ? { version: body.version } : {}),
    }),
  answer: (r) => ok(conversationView(r)),
});
