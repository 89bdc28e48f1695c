import { forward, ok } from "../../forward.js";
import { opsRead, opsWrite } from "../ops-access.js";
import { existingTenant } from "../existing-tenant.js";
import { quotaView } from "../../v1/files/quota.types.js";
import { QuotaParams, TenantQuotaResponse, UpdateQuotaRequest } from "./quota.types.js";

export const getTenantFilesQuota = forward(opsRead("files"), "get /ops/files/tenants/:tenant_id/quota", {
  summary: "A tenant's file storage quota and usage (operators).",
  params: QuotaParams,
  responses: { 200: ["quota and usage", TenantQuotaResponse], 404: "no such tenant" },
  async call({ deps, params }) {
    const tenantId = await existingTenant(deps, params.tenant_id);
    return { tenantId, quota: await deps.services.files.GetQuota({ tenant_id: tenantId }) };
  },
  answer: ({ tenantId, quota }) => ok({ tenant_id: tenantId, ...quotaView(quota) }),
});

/** -1 tells the files service to return to its default; absent leaves the limit as it is. */
const setting = (v: number | null | undefined) => (v === undefined ? undefined : v === null ? -1 : v);

export const putTenantFilesQuota = forward(opsWrite("files"), "put /ops/files/tenants/:tenant_id/quota", {
  summary:
    "Set a tenant's own file storage limits, or return them to the default with null (platform_admin). A limit below the usage keeps the files and refuses new uploads.",
  params: QuotaParams,
  body: UpdateQuotaRequest,
  responses: { 200: ["the limits in force and the usage", TenantQuotaResponse], 404: "no such tenant" },
  async call({ deps, params, body }) {
    const tenantId = await existingTenant(deps, params.tenant_id);
    const bytes = setting(body.bytes_quota);
    const files = setting(body.files_quota);
    const limits = { ...(bytes === undefined ? {} : { bytes_quota: bytes }), ...(files === undefined ? {} : { files_quota: files }) };
    return { tenantId, quota: await deps.services.files.UpdateQuota({ tenant_id: tenantId, ...limits }) };
  },
  answer: ({ tenantId, quota }) => ok({ tenant_id: tenantId, ...quotaView(quota) }),
});
