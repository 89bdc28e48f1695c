import type { EdgeDeps } from "../../deps.js";
import { sessionPrincipal } from "../../http/access.js";
import { defineRoute } from "../../http/route.js";
import { usageJson } from "../ops/ai/requests.js";
import { UsageListResponse } from "../ops/ai/requests.types.js";

export const listManagedAiUsage = defineRoute<EdgeDeps>({
  method: "get",
  path: "/console/services/managed-ai/usage",
  summary: "The caller tenant's latest 100 managed requests.",
  tags: ["console", "ai"],
  access: { kind: "tenant", minRole: "member" },
  responses: { 200: { description: "usage records, newest first", schema: UsageListResponse } },
  async handler({ deps, principal }) {
    const res = await deps.services.managedAi.ListUsage({ tenant_id: sessionPrincipal(principal).tenantId, limit: 100 });
    return { status: 200, body: { data: res.records.map(usageJson) } };
  },
});
