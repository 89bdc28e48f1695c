import type { EdgeDeps } from "../../../deps.js";
import { keyPrincipal } from "../../../http/access.js";
import { defineRoute } from "../../../http/route.js";
import { AliasParams, INVOKE_ACCESS, ModelList } from "./ai.types.js";

/**
 * `GET /v1/apps/ai/{alias}/v1/models` in OpenAI's shape, so `client.models.list()`
 * works: a managed instance's models, or a byok instance's provider listing unchanged.
 */
export const getModels = defineRoute<EdgeDeps, AliasParams>({
  method: "get",
  path: "/v1/apps/ai/:alias/v1/models",
  summary: "The instance's models (OpenAI-compatible listing).",
  tags: ["ai"],
  access: INVOKE_ACCESS,
  params: AliasParams,
  responses: { 200: { description: "models", schema: ModelList }, 404: { description: "no such instance" }, 502: { description: "a byok provider failed" } },
  async handler({ deps, params, principal }) {
    const res = await deps.services.managedAi.ListInstanceModels({ tenant_id: keyPrincipal(principal).tenantId, alias: params.alias });
    if (res.provider_body) return { status: 200, body: JSON.parse(res.provider_body.toString("utf8")) as unknown };
    return {
      status: 200,
      body: {
        object: "list",
        data: res.models.map((m) => ({ id: m.alias, object: "model", created: Math.floor(Date.parse(m.created_at) / 1000), owned_by: "gateway" })),
      },
    };
  },
});
