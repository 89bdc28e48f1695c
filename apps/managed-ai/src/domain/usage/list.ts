import { z } from "zod";
import { AppError, parseInput } from "@gateway/errors";
import { pageInput, pageOf, pageStart, type Page } from "@gateway/contract";
import type { ManagedAiContext } from "../context.js";
import type { RequestEventRow } from "../ports.js";
import type { UsageRecord } from "../rows.js";
import { ResourceId } from "../schemas.js";

export const ListUsageInput = z
  .object({
    tenant_id: z.union([z.literal(""), ResourceId]).default(""),
    all_tenants: z.boolean().default(false),
    before: z.union([z.literal(""), ResourceId]).default(""),
    ...pageInput(200, 100),
    /** managed ("" too): metered records; byok: bring-your-own-key ones (never charged); all: both. */
    mode: z.enum(["", "managed", "byok", "all"]).default(""),
  })
  .refine((q) => q.all_tenants || q.tenant_id !== "", {
    path: ["tenant_id"],
    message: "is required (all_tenants asks for the operators' view of every tenant)",
  })
  .refine((q) => !(q.all_tenants && q.tenant_id !== ""), { path: ["all_tenants"], message: "cannot be combined with a tenant_id" });

/**
 * Newest first, a page at a time (docs/decisions/0212): one tenant's (customers) or,
 * asked for explicitly with `all_tenants` (the edge's /ops routes), everyone's
 * (operators). An empty tenant id alone is refused: it never means "every tenant".
 * Records page by their position (`seq`): `cursor` is the contract's next cursor;
 * `before` (a record id of an earlier page, 400 when it is not one of the caller's)
 * continues after that record the same way. `mode` picks managed records (the
 * default), bring-your-own-key ones or both.
 */
export async function listUsage({ ctx, input }: { ctx: ManagedAiContext; input: z.input<typeof ListUsageInput> }): Promise<Page<UsageRecord>> {
  const q = parseInput(ListUsageInput, input);
  const tenantId = q.tenant_id || null;
  let after = pageStart(q.cursor);
  if (q.before) {
    const from = await ctx.store.usage.seqOf(q.before, tenantId);
    if (from === null) throw new AppError("invalid_request", "before is not a request of this list.");
    if (after === null || from < after) after = from;
  }
  const mode = q.mode === "all" ? null : q.mode === "byok" ? "byok" : "managed";
  const rows = await ctx.store.usage.page({ tenantId, mode, before: after, take: q.limit + 1 });
  return pageOf(rows, q.limit, (r) => r.seq);
}

export const GetUsageInput = z.object({ id: ResourceId, tenant_id: ResourceId });

/** One record of the tenant (required); another tenant's is as absent as one that does not exist. */
export async function getUsage({ ctx, input }: { ctx: ManagedAiContext; input: z.input<typeof GetUsageInput> }): Promise<UsageRecord> {
  const q = parseInput(GetUsageInput, input);
  const row = await ctx.store.usage.get(q.id);
  if (!row || row.tenantId !== q.tenant_id) throw new AppError("not_found", "No such request.");
  return row;
}

export const ListRequestEventsInput = z.object({ request_id: ResourceId, tenant_id: ResourceId });

/**
 * The events of one request kept with its usage record (its reservation and settlement,
 * docs/decisions/0330), as they were published, oldest first: the tenant's own, none for
 * another tenant's request or an unknown one. The audit trail stores no copy of these.
 */
export async function listRequestEvents({ ctx, input }: { ctx: ManagedAiContext; input: z.input<typeof ListRequestEventsInput> }): Promise<RequestEventRow[]> {
  const q = parseInput(ListRequestEventsInput, input);
  const rows = await ctx.store.usage.events(q.request_id, q.tenant_id);
  return rows.sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime());
}
