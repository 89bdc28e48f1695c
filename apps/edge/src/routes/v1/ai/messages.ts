import type { EdgeDeps } from "../../../deps.js";
import { defineRoute } from "../../../http/route.js";
import { AliasParams, COST_HEADERS, INVOKE_ACCESS } from "./ai.types.js";
import { cancelOnClose, invokeRequest, relayStream, sendJson, setCostHeaders } from "./invoke.js";
import {
  anthropicErrors,
  anthropicStreamError,
  CountTokensHeaders,
  CountTokensRequest,
  CountTokensResponse,
  MessageResponse,
  MessagesHeaders,
  MessagesRequest,
} from "./messages.types.js";

/*
 * Anthropic's Messages API on every ai-model instance, managed (metered exactly as
 * the chat route: managed-ai translates the body to the chat request and back, one
 * metering path) and byok (CONTRACT.md 6c, decision 0207). Same key policy as the
 * chat route; errors in Anthropic's shape, from the first byte.
 */

export const postMessages = defineRoute<EdgeDeps, AliasParams, Record<string, never>, unknown, MessagesHeaders>({
  method: "post",
  path: "/v1/apps/ai/:alias/v1/messages",
  summary:
    "Anthropic's Messages API (JSON, or Anthropic's server-sent events); metered as the chat route on managed instances, the customer's provider on byok ones.",
  tags: ["ai"],
  hot: true,
  access: INVOKE_ACCESS,
  params: AliasParams,
  body: MessagesRequest,
  validateBody: false,
  headers: MessagesHeaders,
  errorShape: anthropicErrors,
  responses: {
    200: {
      description:
        "The message (JSON), or a stream of Anthropic's events: message_start, content_block_start/delta/stop, message_delta (stop_reason, usage), message_stop",
      schema: MessageResponse,
      headers: { ...COST_HEADERS, "X-Service-Final-Cost": "The charge (byok: the cost at config.pricing), USD with four decimals (JSON answers only)." },
    },
    400: {
      description:
        "invalid_request_error: invalid body (a top-level field outside CONTRACT.md 6c is named), or max_tokens above the instance's or model's limit",
    },
    402: { description: "billing_error: insufficient balance; no provider call (managed)" },
    404: { description: "not_found_error: no such instance" },
    409: {
      description:
        "invalid_request_error: worst case above max_cost_per_request (pricing.cost), a spend budget without room for the reservation (budget), or Idempotency-Key reused",
    },
    502: { description: "overloaded_error: the provider failed; the reservation was released" },
  },
  async handler({ deps, req, res, params, headers, principal }) {
    const input = invokeRequest(headers, params.alias, principal, req.rawBody ?? Buffer.from("{}"));
    const cancel = cancelOnClose(res);
    if ((req.body as { stream?: unknown }).stream !== true) {
      const result = await deps.services.managedAi.InvokeMessages(input, { deadlineMs: deps.env.INVOKE_DEADLINE_MS, signal: cancel.signal });
      setCostHeaders(res, result, { priceVersion: true });
      sendJson(res, result.body);
      return { written: true };
    }
    const stream = deps.services.managedAi.InvokeMessagesStream(input, { deadlineMs: deps.env.INVOKE_DEADLINE_MS, signal: cancel.signal });
    return relayStream(deps, res, stream, cancel, {
      priceVersion: true,
      event: (data, name) => `event: ${name}\ndata: ${data}\n\n`,
      end: () => "",
      done: "",
      failure: anthropicStreamError,
    });
  },
});

export const postCountTokens = defineRoute<EdgeDeps, AliasParams, Record<string, never>, unknown, CountTokensHeaders>({
  method: "post",
  path: "/v1/apps/ai/:alias/v1/messages/count_tokens",
  summary: "Anthropic's token count of a Messages request: the gateway's upper bound (CONTRACT.md 6b), not metered.",
  tags: ["ai"],
  hot: true,
  access: INVOKE_ACCESS,
  params: AliasParams,
  body: CountTokensRequest,
  validateBody: false,
  headers: CountTokensHeaders,
  errorShape: anthropicErrors,
  responses: {
    200: { description: "The count", schema: CountTokensResponse },
    400: { description: "invalid_request_error: invalid body" },
    404: { description: "not_found_error: no such instance" },
  },
  async handler({ deps, req, params, principal }) {
    const input = invokeRequest({}, params.alias, principal, req.rawBody ?? Buffer.from("{}"));
    const result = await deps.services.managedAi.CountMessageTokens(input);
    return { status: 200, body: { input_tokens: Number(result.input_tokens) } };
  },
});
