import { AppError } from "@gateway/errors";
import type { EdgeDeps } from "../../../deps.js";
import { keyPrincipal } from "../../../http/access.js";
import { defineRoute } from "../../../http/route.js";
import { unitsToNumber } from "@gateway/contract";
import { PushAliasParams, SendPushRequest, SendPushResponse } from "./send.types.js";

/**
 * `POST /v1/apps/webhook-push/{alias}/send` (CONTRACT.md section 8): 200 when
 * every enabled target got the message, 207 when some did (same body), 502 when
 * none did (the error shape with `results`).
 */
export const postPushSend = defineRoute<EdgeDeps, PushAliasParams, Record<string, never>, SendPushRequest>({
  method: "post",
  path: "/v1/apps/webhook-push/:alias/send",
  summary: "Send a push message to every enabled target of an instance, in parallel; charged per delivered target.",
  tags: ["push"],
  access: { kind: "apiKey", scope: "push:send", service: { type: "webhook-push", aliasParam: "alias" } },
  params: PushAliasParams,
  body: SendPushRequest,
  responses: {
    200: { description: "every enabled target got the message", schema: SendPushResponse },
    207: { description: "some targets got it (per-target results); charged for those only", schema: SendPushResponse },
    402: { description: "the balance does not cover PUSH_PRICE_UNITS × enabled targets; nothing sent" },
    409: { description: "the key's or the instance's spend budget has no room for PUSH_PRICE_UNITS × enabled targets (`budget` extra); nothing sent" },
    403: { description: "the instance is disabled" },
    404: { description: "no such webhook-push instance" },
    422: { description: "no enabled target" },
    502: { description: "no target got the message (error body with `results`); nothing charged" },
  },
  async handler({ deps, params, body, principal }) {
    const key = keyPrincipal(principal);
    const sent = await deps.services.messaging.SendPush(
      {
        tenant_id: key.tenantId,
        api_key_id: key.keyId,
        alias: params.alias,
        title: body.title,
        text: body.text,
        ...(key.budget ? { key_budget_units: key.budget.units.toString(), key_budget_period: key.budget.period } : {}),
      },
      { deadlineMs: deps.env.PUSH_DEADLINE_MS },
    );
    const results = sent.results.map((r) => ({ target_id: r.target_id, ok: r.ok, status: r.status ?? null, error: r.error ?? null }));
    const data = { message_id: sent.message_id, results, charged_units: unitsToNumber(sent.charged_units) };
    if (sent.status === "failed") {
      throw new AppError("upstream_error", "No target accepted the message; nothing was charged.", {
        extra: { message_id: sent.message_id, results, charged_units: data.charged_units },
      });
    }
    return { status: sent.status === "delivered" ? 200 : 207, body: { data } };
  },
});
