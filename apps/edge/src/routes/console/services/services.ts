import type { managedAi } from "@gateway/protos";
import type { EdgeDeps } from "../../../deps.js";
import { sessionPrincipal } from "../../../http/access.js";
import { defineRoute } from "../../../http/route.js";
import { PutServiceRequest, ServiceListResponse, ServiceResponse } from "./services.types.js";

function instanceJson(i: managedAi.Instance__Output) {
  return {
    id: i.id,
    service_id: i.service_id,
    alias: i.alias,
    status: i.status,
    config: {
      mode: i.mode,
      default_model: i.default_model,
      models: i.models.length > 0 ? i.models : null,
      max_tokens_per_request: i.max_tokens_per_request ?? null,
      max_cost_per_request: i.max_cost_per_request ?? null,
    },
    version: i.version,
    created_at: i.created_at,
    updated_at: i.updated_at,
  };
}

export const postService = defineRoute<EdgeDeps, Record<string, never>, Record<string, never>, PutServiceRequest>({
  method: "post",
  path: "/console/services",
  summary: "Create or update (same alias) a managed ai-model instance of the caller's tenant (service:manage).",
  tags: ["console", "services"],
  access: { kind: "tenant", minRole: "admin" },
  body: PutServiceRequest,
  responses: { 201: { description: "created or updated", schema: ServiceResponse }, 422: { description: "unknown model" } },
  async handler({ deps, body, principal }) {
    const me = sessionPrincipal(principal);
    const instance = await deps.services.managedAi.PutInstance({
      tenant_id: me.tenantId,
      alias: body.alias,
      status: body.status,
      mode: body.config.mode,
      default_model: body.config.default_model,
      models: body.config.models ?? [],
      ...(body.config.max_tokens_per_request !== undefined ? { max_tokens_per_request: body.config.max_tokens_per_request } : {}),
      ...(body.config.max_cost_per_request !== undefined ? { max_cost_per_request: body.config.max_cost_per_request } : {}),
    });
    return { status: 201, body: { data: instanceJson(instance) } };
  },
});

export const getServices = defineRoute<EdgeDeps>({
  method: "get",
  path: "/console/services",
  summary: "The caller tenant's service instances, newest first.",
  tags: ["console", "services"],
  access: { kind: "tenant", minRole: "member" },
  responses: { 200: { description: "instances", schema: ServiceListResponse } },
  async handler({ deps, principal }) {
    const res = await deps.services.managedAi.ListInstances({ tenant_id: sessionPrincipal(principal).tenantId });
    return { status: 200, body: { data: res.instances.map(instanceJson) } };
  },
});
