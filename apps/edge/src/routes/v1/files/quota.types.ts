import { z } from "zod";
import type { files } from "@gateway/protos";

/** A tenant's storage quota: the limits in force and what its files hold (uploads in progress and removed files do not count). */
export const StorageQuota = z.object({
  bytes_limit: z.number().int().describe("Bytes the tenant's files may hold together."),
  bytes_used: z.number().int().describe("Bytes its stored files hold (until the sweeper removes an expired or used-up file)."),
  files_limit: z.number().int().describe("Files the tenant may keep at once."),
  files_used: z.number().int(),
});
export type StorageQuota = z.infer<typeof StorageQuota>;

export const StorageQuotaResponse = z.object({ data: StorageQuota });

/** The files service's answer, with its 64-bit counts as numbers. */
export function quotaView(q: files.StorageQuota__Output): StorageQuota {
  return { bytes_limit: Number(q.bytes_limit), bytes_used: Number(q.bytes_used), files_limit: q.files_limit, files_used: q.files_used };
}

/** The error body of an upload refused for size or quota (413, 409). */
export const QuotaErrorBody = z.object({
  error: z.enum(["payload_too_large", "conflict"]),
  message: z.string(),
  request_id: z.string(),
  quota: StorageQuota.optional().describe("When the tenant's quota refused the upload: its limits and usage at that moment."),
  max_bytes: z.number().int().optional().describe("The largest file the service ever accepts, when this one is larger (FILES_MAX_BYTES)."),
});
