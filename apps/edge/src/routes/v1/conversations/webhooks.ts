import { z } from "zod";
import { data } from "../../page.js";
import { accepted, created, forward, noContent, ok } from "../../forward.js";
import { DeliveryView, RegisterWebhookRequest, ReplayRequest, ReplayView, WebhookParams, WebhookView } from "./webhooks.types.js";
import { deliveryView, webhookView } from "./encode.js";
import { TAGS } from "./hub-access.js";

const EVENTS_WRITE = { tags: TAGS, access: { kind: "apiKey", scope: "conversation:events:write" } } as const;
const notFound = "no such webhook of this tenant";

export const postWebhook = forward(EVENTS_WRITE, "post /v1/conversations/webhooks", {
  summary:
    "Register a webhook for conversation events: each is POSTed as JSON, signed (X-Service-Signature: sha256=<hex HMAC-SHA256(secret, body)>, X-Service-Event-Id), retried with backoff up to 8 attempts.",
  body: RegisterWebhookRequest,
  responses: { 201: ["registered", data(WebhookView)], 400: "invalid or disallowed URL, bad secret or event type" },
  call: ({ deps, body, tenantId }) =>
    deps.services.conversations.RegisterWebhook({ tenant_id: tenantId, url: body.url, secret: body.secret, event_types: body.event_types ?? [] }),
  answer: (r) => created(webhookView(r)),
});

export const getWebhooks = forward(EVENTS_WRITE, "get /v1/conversations/webhooks", {
  summary: "The tenant's conversation webhooks, newest first; secrets redacted.",
  responses: { 200: ["webhooks", data(z.array(WebhookView))] },
  call: ({ deps, tenantId }) => deps.services.conversations.ListWebhooks({ tenant_id: tenantId }),
  answer: (res) => ok(res.webhooks.map(webhookView)),
});

export const deleteWebhook = forward(EVENTS_WRITE, "delete /v1/conversations/webhooks/:webhookId", {
  summary: "Revoke a webhook: nothing more is sent to it; its pending deliveries are canceled.",
  params: WebhookParams,
  responses: { 204: "revoked (also when it already was)", 404: notFound },
  call: ({ deps, params, tenantId }) => deps.services.conversations.RevokeWebhook({ tenant_id: tenantId, id: params.webhookId }),
  answer: noContent,
});

export const postWebhookReplay = forward(EVENTS_WRITE, "post /v1/conversations/webhooks/:webhookId/replay", {
  summary: "Deliver again the events after a cursor (with their original event ids), at most 1000 per call; continue from next_cursor.",
  params: WebhookParams,
  body: ReplayRequest,
  responses: { 202: ["queued", data(ReplayView)], 404: notFound, 409: "the webhook is revoked" },
  call: ({ deps, params, body, tenantId }) =>
    deps.services.conversations.ReplayWebhook({ tenant_id: tenantId, id: params.webhookId, cursor: body.cursor ?? "", limit: body.limit ?? 1000 }),
  answer: ({ webhook_id, from_cursor, next_cursor, queued }) => accepted({ webhook_id, from_cursor, next_cursor, queued }),
});

export const getWebhookDeliveries = forward(EVENTS_WRITE, "get /v1/conversations/webhooks/:webhookId/deliveries", {
  summary: "The webhook's latest 100 deliveries, newest first: state, attempts, last status.",
  params: WebhookParams,
  responses: { 200: ["deliveries", data(z.array(DeliveryView))], 404: notFound },
  call: ({ deps, params, tenantId }) => deps.services.conversations.ListWebhookDeliveries({ tenant_id: tenantId, webhook_id: params.webhookId, limit: 100 }),
  answer: (res) => ok(res.deliveries.map(deliveryView)),
});
