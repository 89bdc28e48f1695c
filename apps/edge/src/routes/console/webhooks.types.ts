import { z } from "zod";
import { Id, listPageQuery } from "@gateway/contract";
import { NextCursor } from "../page.js";

/** What an account webhook can subscribe to (CONTRACT.md section 13). */
export const AccountEvent = z.enum(["budget.threshold", "budget.reached", "balance.low", "key.expiring", "ping"]);

export const CreateWebhookRequest = z.strictObject({
  url: z
    .string()
    .min(1)
    .max(2048)
    .describe("HTTPS URL that receives the signed POSTs; loopback, private and link-local addresses are refused (as for job callbacks)."),
  events: z
    .array(AccountEvent)
    .min(1)
    .max(5)
    .refine((e) => new Set(e).size === e.length, "must not repeat an event")
    .describe("The events to send (a `ping` from the test route is always sent)."),
  description: z.string().max(256).optional(),
});
export type CreateWebhookRequest = z.infer<typeof CreateWebhookRequest>;

export const WebhookParams = z.object({ id: Id });
export type WebhookParams = z.infer<typeof WebhookParams>;

export const WebhookListQuery = z.strictObject(listPageQuery({ item: "webhooks", fallback: "the newest 100" }));
export type WebhookListQuery = z.infer<typeof WebhookListQuery>;
export const DeliveryListQuery = z.strictObject(listPageQuery({ item: "deliveries", fallback: "the latest 100" }));
export type DeliveryListQuery = z.infer<typeof DeliveryListQuery>;

export const Webhook = z.object({
  id: z.string(),
  url: z.string(),
  events: z.array(AccountEvent),
  description: z.string().nullable(),
  created_at: z.string(),
});
export const WebhookCreatedResponse = z.object({
  data: Webhook.extend({ secret: z.string().describe("Signs every delivery (X-Service-Signature: sha256=<hex HMAC-SHA256>); shown only here.") }),
});
export const WebhookListResponse = z.object({ data: z.array(Webhook), next_cursor: NextCursor });
export const WebhookTestResponse = z.object({ data: z.object({ event_id: z.string() }) });

export const Delivery = z.object({
  event_id: z.string(),
  event: AccountEvent,
  status: z.enum(["pending", "delivered", "exhausted"]),
  attempts: z.number().int(),
  last_status: z.number().int().nullable(),
  created_at: z.string(),
});
export const DeliveryListResponse = z.object({ data: z.array(Delivery), next_cursor: NextCursor });
