import { z } from "zod";
import { AppError, parseInput } from "@gateway/errors";
import type { ManagedAiContext } from "../../db.js";
import type { UsageRecord } from "../../generated/prisma/client.js";
import { ResourceId } from "../schemas.js";

export const ListUsageInput = z.object({
  tenant_id: z.union([z.literal(""), ResourceId]).default(""),
  limit: z.number().int().min(0).max(200).default(100),
  before: z.union([z.literal(""), ResourceId]).default(""),
});

/**
 * Newest first: one tenant's (customers) or everyone's (operators), a page at a time.
 * `before` continues after a record of an earlier page (ties on created_at by id), so
 * paging neither skips nor repeats; a `before` that is not one of the caller's records is 400.
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
    take: q.limit || 100,
  });
}

export const GetUsageInput = z.object({ id: ResourceId, tenant_id: z.union([z.literal(""), ResourceId]).default("") });

/** One record; another tenant's is as absent as one that does not exist. */
export async function getUsage({ ctx, input }: { ctx: ManagedAiContext; input: z.input<typeof GetUsageInput> }): Promise<UsageRecord> {
  const q = parseInput(GetUsageInput, input);
  const row = await ctx.prisma.usageRecord.findUnique({ where: { id: q.id } });
  if (!row || (q.tenant_id && row.tenantId !== q.tenant_id)) throw new AppError("not_found", "No such request.");
  return row;
}
