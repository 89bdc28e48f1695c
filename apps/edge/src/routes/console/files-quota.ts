import type { EdgeDeps } from "../../deps.js";
import { sessionPrincipal } from "../../http/access.js";
import { defineRoute } from "../../http/route.js";
import { quotaView, StorageQuotaResponse } from "../v1/files/quota.types.js";

export const getFilesQuota = defineRoute<EdgeDeps>({
  method: "get",
  path: "/console/files/quota",
  summary: "The caller tenant's file storage quota and what its files use.",
  tags: ["console", "files"],
  access: { kind: "tenant", minRole: "member" },
  responses: { 200: { description: "quota and usage", schema: StorageQuotaResponse } },
  async handler({ deps, principal }) {
    const q = await deps.services.files.GetQuota({ tenant_id: sessionPrincipal(principal).tenantId });
    return { status: 200, body: { data: quotaView(q) } };
  },
});
