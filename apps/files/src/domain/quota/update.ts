import { z } from "zod";
import { parseInput } from "@gateway/errors";
import { Id } from "@gateway/contract";
import type { FilesContext } from "../context.js";
import { readQuota, type StorageQuota } from "./usage.js";

/** -1: back to the service's default; absent: unchanged. */
const Setting = (max: number) => z.coerce.number().int().min(-1).max(max).optional();

export const UpdateQuotaInput = z.object({
  tenant_id: Id,
  bytes_quota: Setting(Number.MAX_SAFE_INTEGER),
  files_quota: Setting(2_147_483_647),
});
export type UpdateQuotaInput = z.input<typeof UpdateQuotaInput>;

/**
 * Sets (or returns to the default) a tenant's own storage limits. A limit below
 * what the tenant already holds keeps its files and refuses new uploads until
 * enough of them are gone.
 */
export async function updateQuota({ ctx, input }: { ctx: Pick<FilesContext, "transact" | "limits">; input: UpdateQuotaInput }): Promise<StorageQuota> {
  const q = parseInput(UpdateQuotaInput, input);
  const override = (v: number | undefined) => (v === undefined ? undefined : v === -1 ? null : v);
  const bytes = override(q.bytes_quota);
  const files = override(q.files_quota);
  return ctx.transact(async (tx) => {
    await tx.$executeRawUnsafe("INSERT INTO tenant_storage (tenant_id) VALUES ($1) ON CONFLICT (tenant_id) DO NOTHING", q.tenant_id);
    await tx.$executeRawUnsafe(
      `UPDATE tenant_storage
          SET bytes_quota = CASE WHEN $2::boolean THEN $3::bigint ELSE bytes_quota END,
              files_quota = CASE WHEN $4::boolean THEN $5::integer ELSE files_quota END,
              updated_at = now()
        WHERE tenant_id = $1`,
      q.tenant_id,
      bytes !== undefined,
      bytes === undefined || bytes === null ? null : BigInt(bytes),
      files !== undefined,
      files ?? null,
    );
    return readQuota(tx, q.tenant_id, ctx.limits);
  });
}
