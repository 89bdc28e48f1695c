import { forward, ok } from "../../forward.js";
import { member } from "../console-access.js";
import { unitsToNumber } from "@gateway/contract";
import { PushMessagesParams, PushMessagesQuery, PushMessagesResponse } from "./push-messages.types.js";

export const listPushMessages = forward(member("push"), "get /console/services/webhook-push/:alias/messages", {
  summary: "The delivery log of a webhook-push instance of the caller's tenant: messages newest first, each with every target's outcome.",
  params: PushMessagesParams,
  query: PushMessagesQuery,
  responses: {
    200: ["messages, newest first", PushMessagesResponse],
    400: "`before` is not a message of this instance",
    404: "no such webhook-push instance of this tenant",
  },
  call: ({ deps, params, query, tenantId }) =>
    deps.services.messaging.ListPushMessages({ tenant_id: tenantId, alias: params.alias, limit: query.limit ?? 50, before: query.before ?? "" }),
  answer: (res) =>
    ok(
      res.messages.map((m) => ({
        id: m.id,
        status: m.status as "sending" | "delivered" | "partial" | "failed",
        charged_units: unitsToNumber(m.charged_units),
        created_at: m.created_at,
        settled_at: m.settled_at ?? null,
        deliveries: m.deliveries.map((d) => ({
          target_id: d.target_id,
          type: d.type as "webhook" | "telegram",
          ok: d.ok ?? null,
          status: d.status ?? null,
          error: d.error ?? null,
          finished_at: d.finished_at ?? null,
        })),
      })),
    ),
});
