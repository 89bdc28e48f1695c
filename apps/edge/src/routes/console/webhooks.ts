import type { jobs } from "@gateway/protos";
import type { EdgeDeps } from "../../deps.js";
import { sessionPrincipal } from "../../http/access.js";
import { defineRoute } from "../../http/route.js";
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
const access = { kind: "tenant", minRole: "admin" } as const;
const tags = ["console", "webhooks"];

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

export const postWebhook = defineRoute<EdgeDeps, Record<string, never>, Record<string, never>, CreateWebhookRequest>({
  method: "post",
  path: "/console/webhooks",
  summary: "Register an account webhook (tenant admin): alerts as signed POSTs, retried like job callbacks. The secret is shown once.",
  tags,
  access,
  body: CreateWebhookRequest,
  responses: {
    201: { description: "registered, with its secret", schema: WebhookCreatedResponse },
    400: { description: "not an HTTPS URL, a private target, or an unknown event" },
    422: { description: "the tenant has too many webhooks" },
  },
  async handler({ deps, body, principal }) {
    const res = await deps.services.jobs.CreateAccountWebhook({
      tenant_id: sessionPrincipal(principal).tenantId,
      url: body.url,
      events: body.events,
      description: body.description ?? "",
    });
    return { status: 201, body: { data: { ...webhookJson(res.webhook!), secret: res.secret } } };
  },
});

export const getWebhooks = defineRoute<EdgeDeps, Record<string, never>, WebhookListQuery>({
  method: "get",
  path: "/console/webhooks",
  summary: "The tenant's account webhooks, newest first, without secrets.",
  tags,
  access,
  query: WebhookListQuery,
  responses: { 200: { description: "webhooks", schema: WebhookListResponse } },
  async handler({ deps, query, principal }) {
    const res = await deps.services.jobs.ListAccountWebhooks({
      tenant_id: sessionPrincipal(principal).tenantId,
      ...pageArgs(query, 0),
    });
    return listAnswer(res.webhooks, webhookJson, res.next_cursor, query);
  },
});

export const deleteWebhook = defineRoute<EdgeDeps, WebhookParams>({
  method: "delete",
  path: "/console/webhooks/:id",
  summary: "Remove an account webhook and its deliveries.",
  tags,
  access,
  params: WebhookParams,
  responses: { 204: { description: "removed" }, 404: { description: "no such webhook of the tenant" } },
  async handler({ deps, params, principal }) {
    await deps.services.jobs.DeleteAccountWebhook({ tenant_id: sessionPrincipal(principal).tenantId, id: params.id });
    return { status: 204 };
  },
});

export const postWebhookTest = defineRoute<EdgeDeps, WebhookParams>({
  method: "post",
  path: "/console/webhooks/:id/test",
  summary: "Send a `ping` event to the webhook (202: queued; its delivery shows in the delivery log).",
  tags,
  access,
  params: WebhookParams,
  responses: { 202: { description: "queued", schema: WebhookTestResponse }, 404: { description: "no such webhook of the tenant" } },
  async handler({ deps, params, principal }) {
    const res = await deps.services.jobs.TestAccountWebhook({ tenant_id: sessionPrincipal(principal).tenantId, id: params.id });
    return { status: 202, body: { data: { event_id: res.event_id } } };
  },
});

export const getWebhookDeliveries = defineRoute<EdgeDeps, WebhookParams, DeliveryListQuery>({
  method: "get",
  path: "/console/webhooks/:id/deliveries",
  summary: "The webhook's delivery log, newest first: the latest 100, or a page at a time.",
  tags,
  access,
  params: WebhookParams,
  query: DeliveryListQuery,
  responses: { 200: { description: "deliveries", schema: DeliveryListResponse }, 404: { description: "no such webhook of the tenant" } },
  async handler({ deps, params, query, principal }) {
    const res = await deps.services.jobs.ListAccountWebhookDeliveries({
      tenant_id: sessionPrincipal(principal).tenantId,
      webhook_id: params.id,
      ...pageArgs(query, 0),
    });
    return listAnswer(res.deliveries, deliveryJson, res.next_cursor, query);
  },
});
