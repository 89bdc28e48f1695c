import type { EdgeDeps } from "../../../deps.js";
import { defineRoute } from "../../../http/route.js";
import { AliasParams, ChatCompletionRequest, ChatCompletionResponse, COST_HEADERS, INVOKE_ACCESS, INVOKE_ERRORS, InvokeHeaders } from "./ai.types.js";
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
  access: INVOKE_ACCESS,
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
    ...INVOKE_ERRORS,
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
    const stream = deps.services.managedAi.InvokeStream({ ...input, stream_batches: true }, { deadlineMs: deps.env.INVOKE_DEADLINE_MS, signal: cancel.signal });
    return relayStream(deps, res, stream, cancel, { priceVersion: true, event: (data) => `data: ${data}\n\n`, end: () => "" });
  },
});
