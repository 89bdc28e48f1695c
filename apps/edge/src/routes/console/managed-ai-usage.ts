import type { EdgeDeps } from "../../deps.js";
import { sessionPrincipal } from "../../http/access.js";
import { defineRoute } from "../../http/route.js";
import { usageJson } from "../ops/ai/requests.js";
import { UsageListResponse } from "../ops/ai/requests.types.js";
import { UsageQuery } from "./managed-ai-usage.types.js";

export const listManagedAiUsage = defineRoute<EdgeDeps, Record<string, never>, UsageQuery>({
  method: "get",
  path: "/console/services/managed-ai/usage",
  summary: "The caller tenant's managed requests, newest first, 100 a page; `before` (the last id of a page) continues with older ones.",
  tags: ["console", "ai"],
  access: { kind: "tenant", minRole: "member" },
  query: UsageQuery,
  responses: {
    200: { description: "usage records, newest first", schema: UsageListResponse },
    400: { description: "`before` is not a request of this tenant" },
  },
  async handler({ deps, query, principal }) {
    const res = await deps.services.managedAi.ListUsage({
      tenant_id: sessionPrincipal(principal).tenantId,
      limit: query.limit ?? 100,
      before: query.before ?? "",
    });
    return { status: 200, body: { data: res.records.map(usageJson) } };
  },
});
