import { forward, ok } from "../forward.js";
import { quotaView } from "../v1/files/quota.types.js";
import { member } from "./console-access.js";
import { StorageQuotaResponse } from "./files-quota.types.js";

export const getFilesQuota = forward(member("files"), "get /console/files/quota", {
  summary: "The caller tenant's file storage quota and what its files use.",
  responses: { 200: ["quota and usage", StorageQuotaResponse] },
  call: ({ deps, tenantId }) => deps.services.files.GetQuota({ tenant_id: tenantId }),
  answer: (quota) => ok(quotaView(quota)),
});
