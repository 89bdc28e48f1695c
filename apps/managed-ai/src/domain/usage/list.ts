import { z } from "zod";
import { AppError, parseInput } from "@gateway/errors";
import { listLimit } from "@gateway/contract-schemas";
import type { ManagedAiContext } from "../../db.js";
import type { UsageRecord } from "../../generated/prisma/client.js";
import { ResourceId } from "../schemas.js";

export const ListUsageInput = z
  .object({
    tenant_id: z.union([z.literal(""), ResourceId]).default(""),
    limit: listLimit(200, 100),
    all_tenants: z.boolean().default(false),
    before: z.union([z.literal(""), ResourceId]).default(""),
  })
  .refine((q) => q.all_tenants || q.tenant_id !== "", {
    path: ["tenant_id"],
    message: "is required (all_tenants asks for the operators' view of every tenant)",
  })
  .refine((q) => !(q.all_tenants && q.tenant_id !== ""), { path: ["all_tenants"], message: "cannot be combined with a tenant_id" });

/**
 * Newest first, a page at a time: one tenant's (customers) or, asked for explicitly
 * with `all_tenants` (the edge's /ops routes), everyone's (operators). An empty tenant
 * id alone is refused: it never means "every tenant". `before` continues after a record
 * of an earlier page (ties on created_at by id), so paging neither skips nor repeats; a
 * `before` that is not one of the caller's records is 400.
 */
export async function listUsage({ ctx, input }: { ctx: ManagedAiContext; input: z.input<typeof ListUsageInput> }): Promise<UsageRecord[]> {
  const q = parseInput(ListUsageInput, input);
  const scope = q.tenant_id ? { tenantId: q.tenant_id } : {};
  let after = {};
  if (q.before) {
    const from = await ctx.prisma.usageRecord.findFirst({ where: { id: q.before, ...scope }, select: { id: true, createdAt: true } });
    if (!from) throw new AppError("invalid_request", "before is not a request of this list.");
    after = { OR: [{ createdAt: { lt: from.createdAt } }, { createdAt: from.createdAt, id: { lt: from.id } }] };
  }
  return ctx.prisma.usageRecord.findMany({
    where: { ...scope, ...after },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    take: q.limit,
  });
}

export const GetUsageInput = z.object({ id: ResourceId, tenant_id: ResourceId });

/** One record of the tenant (required); another tenant's is as absent as one that does not exist. */
export async function getUsage({ ctx, input }: { ctx: ManagedAiContext; input: z.input<typeof GetUsageInput> }): Promise<UsageRecord> {
  const q = parseInput(GetUsageInput, input);
  const row = await ctx.prisma.usageRecord.findUnique({ where: { id: q.id } });
  if (!row || row.tenantId !== q.tenant_id) throw new AppError("not_found", "No such request.");
  return row;
}
