import { z } from "zod";
import { Id } from "@gateway/contract";
import { StorageQuota } from "../../v1/files/quota.types.js";

export const QuotaParams = z.object({ tenant_id: Id });
export type QuotaParams = z.infer<typeof QuotaParams>;

const Limit = (max: number, what: string) =>
  z.number().int().min(0).max(max).nullable().optional().describe(`${what} for this tenant; null: back to the service's default; absent: unchanged.`);

export const UpdateQuotaRequest = z.strictObject({
  bytes_quota: Limit(Number.MAX_SAFE_INTEGER, "Bytes the tenant's files may hold together"),
  files_quota: Limit(2_147_483_647, "Files the tenant may keep at once"),
});
export type UpdateQuotaRequest = z.infer<typeof UpdateQuotaRequest>;

export const TenantQuotaResponse = z.object({ data: StorageQuota.extend({ tenant_id: z.string() }) });
