import type { EdgeDeps } from "../../../deps.js";
import { defineRoute } from "../../../http/route.js";
import { AliasParams, ChatCompletionRequest, ChatCompletionResponse, COST_HEADERS, InvokeHeaders } from "./ai.types.js";
import { cancelOnClose, invokeRequest, relayStream, setCostHeaders, sendJson } from "./invoke.js";

/**
 * `POST /v1/apps/ai/{alias}/v1/chat/completions`: OpenAI-compatible, on
 * managed instances (metered) and bring-your-own-key ones (the customer's
 * provider, not charged). JSON answers come from a unary call; streams from a
 * server-streaming call whose events pass through unchanged. A client that
 * goes away cancels the call, which stops the relay: managed-ai still finishes
 * a metered provider call and settles it on its usage (docs/decisions/0177).
 */
export const postChatCompletions = defineRoute<EdgeDeps, AliasParams, Record<string, never>, unknown, InvokeHeaders>({
  method: "post",
  path: "/v1/apps/ai/:alias/v1/chat/completions",
  summary: "Chat completion (OpenAI-compatible), JSON or server-sent events; metered on managed instances, the customer's provider on byok ones.",
  tags: ["ai"],
  hot: true,
  access: { kind: "apiKey", scope: "ai:invoke", service: { type: "ai-model", aliasParam: "alias" } },
  params: AliasParams,
  body: ChatCompletionRequest,
  validateBody: false,
  headers: InvokeHeaders,
  responses: {
    200: {
      description: "The provider's answer (JSON), or an SSE stream ending with `data: [DONE]`",
      schema: ChatCompletionResponse,
      headers: { ...COST_HEADERS, "X-Service-Final-Cost": "The charge (byok: the cost at config.pricing), USD with four decimals (JSON answers only)." },
    },
    400: { description: "invalid body, or max_tokens above the instance's or model's limit" },
    402: { description: "insufficient balance; no provider call (managed)" },
    404: { description: "no such instance" },
    409: {
      description:
        "worst case above max_cost or max_cost_per_request (pricing.cost), a spend budget without room for the reservation (budget), or Idempotency-Key reused",
    },
    502: { description: "the provider failed; the reservation was released" },
  },
  async handler({ deps, req, res, params, headers, principal }) {
    const input = invokeRequest(headers, params.alias, principal, req.rawBody ?? Buffer.from("{}"));
    const cancel = cancelOnClose(res);
    if ((req.body as { stream?: unknown }).stream !== true) {
      const result = await deps.services.managedAi.Invoke(input, { deadlineMs: deps.env.INVOKE_DEADLINE_MS, signal: cancel.signal });
      setCostHeaders(res, result, { priceVersion: true });
      sendJson(res, result.body);
      return { written: true };
    }
    const stream = deps.services.managedAi.InvokeStream(input, { deadlineMs: deps.env.INVOKE_DEADLINE_MS, signal: cancel.signal });
    return relayStream(deps, res, stream, cancel, { priceVersion: true, event: (data) => `data: ${data}\n\n`, end: () => "" });
  },
});
