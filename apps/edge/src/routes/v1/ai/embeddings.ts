import type { EdgeDeps } from "../../../deps.js";
import { defineRoute } from "../../../http/route.js";
import { AliasParams, INVOKE_ACCESS, EmbeddingsRequest, EmbeddingsResponse, type InvokeHeaders, NATIVE_COST_HEADERS, SameInvokeHeaders } from "./ai.types.js";
import { cancelOnClose, invokeRequest, setCostHeaders, sendJson } from "./invoke.js";

/** `POST /v1/apps/ai/{alias}/v1/embeddings`: OpenAI-compatible, the provider's answer unchanged (byok; managed ones metered). */
export const postEmbeddings = defineRoute<EdgeDeps, AliasParams, Record<string, never>, unknown, InvokeHeaders>({
  method: "post",
  path: "/v1/apps/ai/:alias/v1/embeddings",
  summary: "Embeddings (OpenAI-compatible).",
  tags: ["ai"],
  hot: true,
  access: INVOKE_ACCESS,
  params: AliasParams,
  body: EmbeddingsRequest,
  validateBody: false,
  headers: SameInvokeHeaders,
  responses: {
    200: { description: "The provider's answer", schema: EmbeddingsResponse, headers: NATIVE_COST_HEADERS },
    400: { description: "invalid body" },
    402: { description: "insufficient balance; no provider call (managed)" },
    404: { description: "no such instance" },
    409: { description: "worst case above max_cost or max_cost_per_request (pricing.cost), or a spend budget without room for the reservation (budget)" },
    502: { description: "the provider failed" },
  },
  async handler({ deps, req, res, params, headers, principal }) {
    const input = invokeRequest(headers, params.alias, principal, req.rawBody ?? Buffer.from("{}"));
    const cancel = cancelOnClose(res);
    const result = await deps.services.managedAi.Embed(input, { deadlineMs: deps.env.INVOKE_DEADLINE_MS, signal: cancel.signal });
    setCostHeaders(res, result, { priceVersion: true });
    sendJson(res, result.body);
    return { written: true };
  },
});
