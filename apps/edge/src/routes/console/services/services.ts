import type { EdgeDeps } from "../../../deps.js";
import { sessionPrincipal } from "../../../http/access.js";
import { defineRoute } from "../../../http/route.js";
import { SERVICE_OWNERS, type ServiceOwner } from "./owners.js";
import { PutServiceRequest, ServiceListResponse, ServiceResponse, type ServiceInstanceJson } from "./services.types.js";

export const postService = defineRoute<EdgeDeps, Record<string, never>, Record<string, never>, PutServiceRequest>({
  method: "post",
  path: "/console/services",
  summary:
    "Create or update (same alias) a service instance of the caller's tenant (service:manage): ai-model (managed or bring-your-own-key), webhook-push or socialops.",
  tags: ["console", "services"],
  access: { kind: "tenant", minRole: "admin" },
  body: PutServiceRequest,
  responses: {
    201: { description: 'created or updated; secrets shown as "[redacted]"', schema: ServiceResponse },
    422: { description: "unknown model, connected account, or a base_url that is not a public address" },
  },
  async handler({ deps, body, principal }) {
    const owner = SERVICE_OWNERS[body.service_id] as ServiceOwner<PutServiceRequest>;
    return { status: 201, body: { data: await owner.put(deps, sessionPrincipal(principal).tenantId, body) } };
  },
});

export const getServices = defineRoute<EdgeDeps>({
  method: "get",
  path: "/console/services",
  summary: 'The caller tenant\'s service instances of every kind, newest first; secrets shown as "[redacted]".',
  tags: ["console", "services"],
  access: { kind: "tenant", minRole: "member" },
  responses: { 200: { description: "instances", schema: ServiceListResponse } },
  async handler({ deps, principal }) {
    const tenantId = sessionPrincipal(principal).tenantId;
    // One call per owning service (messaging owns two kinds and lists both at once).
    const listers = new Set(Object.values(SERVICE_OWNERS).map((owner: ServiceOwner<never>) => owner.list));
    const lists = await Promise.all([...listers].map((list) => list(deps, tenantId)));
    const all: ServiceInstanceJson[] = lists
      .flat()
      .sort((a, b) => (a.created_at < b.created_at ? 1 : a.created_at > b.created_at ? -1 : b.id.localeCompare(a.id)));
    return { status: 200, body: { data: all } };
  },
});
