import type { EdgeDeps } from "../../../deps.js";
import { sessionPrincipal } from "../../../http/access.js";
import { defineRoute } from "../../../http/route.js";
import { unitsToNumber } from "@gateway/contract";
import { PushMessagesParams, PushMessagesQuery, PushMessagesResponse } from "./push-messages.types.js";

export const listPushMessages = defineRoute<EdgeDeps, PushMessagesParams, PushMessagesQuery>({
  method: "get",
  path: "/console/services/webhook-push/:alias/messages",
  summary: "The delivery log of a webhook-push instance of the caller's tenant: messages newest first, each with every target's outcome.",
  tags: ["console", "push"],
  access: { kind: "tenant", minRole: "member" },
  params: PushMessagesParams,
  query: PushMessagesQuery,
  responses: {
    200: { description: "messages, newest first", schema: PushMessagesResponse },
    400: { description: "`before` is not a message of this instance" },
    404: { description: "no such webhook-push instance of this tenant" },
  },
  async handler({ deps, params, query, principal }) {
    const res = await deps.services.messaging.ListPushMessages({
      tenant_id: sessionPrincipal(principal).tenantId,
      alias: params.alias,
      limit: query.limit ?? 50,
      before: query.before ?? "",
    });
    const data = res.messages.map((m) => ({
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
    }));
    return { status: 200, body: { data } };
  },
});
