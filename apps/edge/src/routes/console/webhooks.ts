import type { jobs } from "@gateway/protos";
import { accepted, created, forward, noContent } from "../forward.js";
import { admin } from "./console-access.js";
import { listAnswer, pageArgs } from "../page.js";
import {
  CreateWebhookRequest,
  DeliveryListQuery,
  DeliveryListResponse,
  WebhookCreatedResponse,
  WebhookListQuery,
  WebhookListResponse,
  WebhookParams,
  WebhookTestResponse,
} from "./webhooks.types.js";

// Account webhooks (CONTRACT.md section 13), kept by the jobs service beside job callbacks (docs/decisions/0210).
const ADMIN = admin("webhooks");

const webhookJson = (w: jobs.AccountWebhook__Output) => ({
  id: w.id,
  url: w.url,
  events: w.events as ("budget.threshold" | "budget.reached" | "balance.low" | "key.expiring" | "ping")[],
  description: w.description || null,
  created_at: w.created_at,
});

const deliveryJson = (d: jobs.AccountWebhookDelivery__Output) => ({
  event_id: d.event_id,
  event: d.event as "ping",
  status: d.status as "pending" | "delivered" | "exhausted",
  attempts: d.attempts,
  last_status: d.last_status ?? null,
  created_at: d.created_at,
});

export const postWebhook = forward(ADMIN, "post /console/webhooks", {
  summary: "Register an account webhook (tenant admin): alerts as signed POSTs, retried like job callbacks. The secret is shown once.",
  body: CreateWebhookRequest,
  responses: {
    201: ["registered, with its secret", WebhookCreatedResponse],
    400: "not an HTTPS URL, a private target, or an unknown event",
    422: "the tenant has too many webhooks",
  },
  call: ({ deps, body, tenantId }) =>
    deps.services.jobs.CreateAccountWebhook({ tenant_id: tenantId, url: body.url, events: body.events, description: body.description ?? "" }),
  answer: (res) => created({ ...webhookJson(res.webhook!), secret: res.secret }),
});

export const getWebhooks = forward(ADMIN, "get /console/webhooks", {
  summary: "The tenant's account webhooks, newest first, without secrets.",
  query: WebhookListQuery,
  responses: { 200: ["webhooks", WebhookListResponse] },
  call: ({ deps, query, tenantId }) => deps.services.jobs.ListAccountWebhooks({ tenant_id: tenantId, ...pageArgs(query, 0) }),
  answer: (res, { query }) => listAnswer(res.webhooks, webhookJson, res.next_cursor, query),
});

export const deleteWebhook = forward(ADMIN, "delete /console/webhooks/:id", {
  summary: "Remove an account webhook and its deliveries.",
  params: WebhookParams,
  responses: { 204: "removed", 404: "no such webhook of the tenant" },
  call: ({ deps, params, tenantId }) => deps.services.jobs.DeleteAccountWebhook({ tenant_id: tenantId, id: params.id }),
  answer: noContent,
});

export const postWebhookTest = forward(ADMIN, "post /console/webhooks/:id/test", {
  summary: "Send a `ping` event to the webhook (202: queued; its delivery shows in the delivery log).",
  params: WebhookParams,
  responses: { 202: ["queued", WebhookTestResponse], 404: "no such webhook of the tenant" },
  call: ({ deps, params, tenantId }) => deps.services.jobs.TestAccountWebhook({ tenant_id: tenantId, id: params.id }),
  answer: (res) => accepted({ event_id: res.event_id }),
});

export const getWebhookDeliveries = forward(ADMIN, "get /console/webhooks/:id/deliveries", {
  summary: "The webhook's delivery log, newest first: the latest 100, or a page at a time.",
  params: WebhookParams,
  query: DeliveryListQuery,
  responses: { 200: ["deliveries", DeliveryListResponse], 404: "no such webhook of the tenant" },
  call: ({ deps, params, query, tenantId }) =>
    deps.services.jobs.ListAccountWebhookDeliveries({ tenant_id: tenantId, webhook_id: params.id, ...pageArgs(query, 0) }),
  answer: (res, { query }) => listAnswer(res.deliveries, deliveryJson, res.next_cursor, query),
});
