import { z } from "zod";
import type { EdgeDeps } from "../../../deps.js";
import { keyPrincipal } from "../../../http/access.js";
import { defineRoute } from "../../../http/route.js";
import { data } from "../../page.js";
import { DeliveryView, RegisterWebhookRequest, ReplayRequest, ReplayView, WebhookParams, WebhookView } from "./webhooks.types.js";
import { deliveryView, webhookView } from "./encode.js";

const EVENTS_WRITE = { kind: "apiKey", scope: "conversation:events:write" } as const;
const TAGS = ["conversations"];
const notFound = { description: "no such webhook of this tenant" };

export const postWebhook = defineRoute<EdgeDeps, Record<string, never>, Record<string, never>, RegisterWebhookRequest>({
  method: "post",
  path: "/v1/conversations/webhooks",
  summary:
    "Register a webhook for conversation events: each is POSTed as JSON, signed (X-Service-Signature: sha256=<hex HMAC-SHA256(secret, body)>, X-Service-Event-Id), retried with backoff up to 8 attempts.",
  tags: TAGS,
  access: EVENTS_WRITE,
  body: RegisterWebhookRequest,
  responses: { 201: { description: "registered", schema: data(WebhookView) }, 400: { description: "invalid or disallowed URL, bad secret or event type" } },
  async handler({ deps, body, principal }) {
    const w = await deps.services.conversations.RegisterWebhook({
      tenant_id: keyPrincipal(principal).tenantId,
      url: body.url,
      secret: body.secret,
      event_types: body.event_types ?? [],
    });
    return { status: 201, body: { data: webhookView(w) } };
  },
});

export const getWebhooks = defineRoute<EdgeDeps>({
  method: "get",
  path: "/v1/conversations/webhooks",
  summary: "The tenant's conversation webhooks, newest first; secrets redacted.",
  tags: TAGS,
  access: EVENTS_WRITE,
  responses: { 200: { description: "webhooks", schema: data(z.array(WebhookView)) } },
  async handler({ deps, principal }) {
    const res = await deps.services.conversations.ListWebhooks({ tenant_id: keyPrincipal(principal).tenantId });
    return { status: 200, body: { data: res.webhooks.map(webhookView) } };
  },
});

export const deleteWebhook = defineRoute<EdgeDeps, WebhookParams>({
  method: "delete",
  path: "/v1/conversations/webhooks/:webhookId",
  summary: "Revoke a webhook: nothing more is sent to it; its pending deliveries are canceled.",
  tags: TAGS,
  access: EVENTS_WRITE,
  params: WebhookParams,
  responses: { 204: { description: "revoked (also when it already was)" }, 404: notFound },
  async handler({ deps, params, principal }) {
    await deps.services.conversations.RevokeWebhook({ tenant_id: keyPrincipal(principal).tenantId, id: params.webhookId });
    return { status: 204 };
  },
});

export const postWebhookReplay = defineRoute<EdgeDeps, WebhookParams, Record<string, never>, ReplayRequest>({
  method: "post",
  path: "/v1/conversations/webhooks/:webhookId/replay",
  summary: "Deliver again the events after a cursor (with their original event ids), at most 1000 per call; continue from next_cursor.",
  tags: TAGS,
  access: EVENTS_WRITE,
  params: WebhookParams,
  body: ReplayRequest,
  responses: { 202: { description: "queued", schema: data(ReplayView) }, 404: notFound, 409: { description: "the webhook is revoked" } },
  async handler({ deps, params, body, principal }) {
    const res = await deps.services.conversations.ReplayWebhook({
      tenant_id: keyPrincipal(principal).tenantId,
      id: params.webhookId,
      cursor: body.cursor ?? "",
      limit: body.limit ?? 1000,
    });
    return { status: 202, body: { data: { webhook_id: res.webhook_id, from_cursor: res.from_cursor, next_cursor: res.next_cursor, queued: res.queued } } };
  },
});

export const getWebhookDeliveries = defineRoute<EdgeDeps, WebhookParams>({
  method: "get",
  path: "/v1/conversations/webhooks/:webhookId/deliveries",
  summary: "The webhook's latest 100 deliveries, newest first: state, attempts, last status.",
  tags: TAGS,
  access: EVENTS_WRITE,
  params: WebhookParams,
  responses: { 200: { description: "deliveries", schema: data(z.array(DeliveryView)) }, 404: notFound },
  async handler({ deps, params, principal }) {
    const res = await deps.services.conversations.ListWebhookDeliveries({
      tenant_id: keyPrincipal(principal).tenantId,
      webhook_id: params.webhookId,
      limit: 100,
    });
    return { status: 200, body: { data: res.deliveries.map(deliveryView) } };
  },
});
