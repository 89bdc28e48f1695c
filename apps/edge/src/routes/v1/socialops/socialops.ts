import { pageRequested } from "@gateway/contract";
import type { messaging } from "@gateway/protos";
import type { EdgeDeps } from "../../../deps.js";
import { keyPrincipal } from "../../../http/access.js";
import { accepted, forward } from "../../forward.js";
import { listAnswer, pageArgs, pageBody } from "../../page.js";
import {
  ListQuery,
  MessageListQuery,
  ReplyRequest,
  ReplyResponse,
  SocialEventRequest,
  SocialEventResponse,
  SocialMessageListResponse,
  SocialOpsAliasParams,
  SocialThreadListResponse,
  ThreadListQuery,
  ThreadParams,
  WebhookParams,
} from "./socialops.types.js";

const service = { type: "socialops", aliasParam: "alias" } as const;
const READ = { tags: ["socialops"], access: { kind: "apiKey", scope: "socialops:read", service } } as const;
const WRITE = { tags: ["socialops"], access: { kind: "apiKey", scope: "socialops:write", service } } as const;

function threadJson(t: messaging.SocialThread__Output) {
  return {
    id: t.id,
    provider: t.provider,
    external_thread_id: t.external_thread_id,
    subject: t.subject,
    unread_count: t.unread_count,
    message_count: t.message_count,
    last_activity_at: t.last_activity_at,
    created_at: t.created_at,
  };
}

function messageJson(m: messaging.SocialMessage__Output) {
  return {
    id: m.id,
    thread_id: m.thread_id,
    direction: m.direction,
    event_id: m.event_id ?? null,
    author: m.author ?? null,
    text: m.text,
    created_at: m.created_at,
    delivery: m.delivery_state
      ? {
          state: m.delivery_state,
          attempts: m.delivery_attempts,
          last_status: m.delivery_last_status ?? null,
          error: m.delivery_error ?? null,
          delivered_at: m.delivered_at ?? null,
        }
      : null,
  };
}

export const postSocialOpsWebhook = forward(WRITE, "post /v1/apps/socialops/:alias/webhook/:provider", {
  summary: "Ingest a provider event; stored once per event_id (a repeat answers the same ids with duplicate: true).",
  params: WebhookParams,
  body: SocialEventRequest,
  responses: { 202: ["accepted (or a duplicate)", SocialEventResponse], 404: "no such instance or provider" },
  call: ({ deps, params, body, tenantId }) =>
    deps.services.messaging.IngestSocialEvent({
      tenant_id: tenantId,
      alias: params.alias,
      provider: params.provider,
      event_id: body.event_id,
      thread_id: body.thread_id,
      subject: body.subject,
      text: body.text,
      ...(body.author !== undefined ? { author: body.author } : {}),
    }),
  answer: (res) => accepted({ thread_id: res.thread_id, message_id: res.message_id, ...(res.duplicate ? { duplicate: true } : {}) }),
});

async function threads(deps: EdgeDeps, tenantId: string, alias: string, query: { limit?: number; cursor?: string }, paged: boolean) {
  const res = await deps.services.messaging.ListSocialThreads({ tenant_id: tenantId, alias, ...pageArgs(query, 100), paged });
  return pageBody(res.threads.map(threadJson), res.next_cursor, paged);
}

export const getSocialOpsInbox = forward(READ, "get /v1/apps/socialops/:alias/inbox", {
  summary: "Threads with unread counts, newest activity first.",
  params: SocialOpsAliasParams,
  query: ListQuery,
  responses: { 200: ["threads", SocialThreadListResponse] },
  call: ({ deps, params, query, tenantId }) => threads(deps, tenantId, params.alias, query, false),
  answer: (body) => ({ status: 200, body }),
});

export const getSocialOpsThreads = forward(READ, "get /v1/apps/socialops/:alias/threads", {
  summary:
    "The instance's threads: the 100 with the newest activity; with `limit` or `cursor`, a page at a time, newest first by creation (so new activity never moves a thread between pages).",
  params: SocialOpsAliasParams,
  query: ThreadListQuery,
  responses: { 200: ["threads", SocialThreadListResponse] },
  call: ({ deps, params, query, tenantId }) => threads(deps, tenantId, params.alias, query, pageRequested(query)),
  answer: (body) => ({ status: 200, body }),
});

export const getSocialOpsMessages = forward(READ, "get /v1/apps/socialops/:alias/threads/:thread_id/messages", {
  summary: "A thread's messages, oldest first (the first 500, or a page at a time with `limit` and `cursor`); replies carry their delivery state.",
  params: ThreadParams,
  query: MessageListQuery,
  responses: { 200: ["messages", SocialMessageListResponse], 404: "no such thread of this tenant" },
  call: ({ deps, params, query, tenantId }) =>
    deps.services.messaging.ListSocialMessages({ tenant_id: tenantId, alias: params.alias, thread_id: params.thread_id, ...pageArgs(query, 500) }),
  answer: (res, { query }) => listAnswer(res.messages, messageJson, res.next_cursor, query),
});

export const postSocialOpsReply = forward(WRITE, "post /v1/apps/socialops/:alias/threads/:thread_id/replies", {
  summary: "Queue a reply (202); it is delivered asynchronously and its delivery state shows on the message.",
  params: ThreadParams,
  body: ReplyRequest,
  responses: { 202: ["queued", ReplyResponse], 404: "no such thread of this tenant", 422: "the instance has no reply target" },
  call: ({ deps, params, body, principal }) => {
    const key = keyPrincipal(principal);
    return deps.services.messaging.QueueSocialReply({
      tenant_id: key.tenantId,
      alias: params.alias,
      thread_id: params.thread_id,
      text: body.text,
      api_key_id: key.keyId,
    });
  },
  answer: (message) => accepted({ message_id: message.id, status: "queued" }),
});
