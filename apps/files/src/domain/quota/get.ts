import { z } from "zod";
import { parseInput } from "@gateway/errors";
import { Id } from "@gateway/contract";
import type { FilesContext } from "../context.js";
import { readQuota, type StorageQuota } from "./usage.js";

export const GetQuotaInput = z.object({
  tenant_id: Id,
});
export type GetQuotaInput = z.input<typeof GetQuotaInput>;

/** The tenant's storage limits in force and what its ready files hold. */
export async function getQuota({ ctx, input }: { ctx: Pick<FilesContext, "prisma" | "limits">; input: GetQuotaInput }): Promise<StorageQuota> {
  const q = parseInput(GetQuotaInput, input);
  return readQuota(ctx.prisma, q.tenant_id, ctx.limits);
}
