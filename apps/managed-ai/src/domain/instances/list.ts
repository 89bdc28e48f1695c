import { z } from "zod";
import { AppError, parseInput } from "@gateway/errors";
import type { ManagedAiContext } from "../context.js";
import { ResourceId } from "../schemas.js";
import { byokTarget } from "../invocation/byok-target.js";
import { withBudgets } from "../budgets/instances.js";
import { instanceView, managedConfigOf, type InstanceView } from "./view.js";

export const ListInstancesInput = z.object({ tenant_id: ResourceId });

/** The tenant's instances, newest first (at most 200). */
export async function listInstances({ ctx, input }: { ctx: ManagedAiContext; input: z.input<typeof ListInstancesInput> }): Promise<InstanceView[]> {
  const { tenant_id } = parseInput(ListInstancesInput, input);
  const rows = await ctx.store.instances.list(tenant_id);
  return withBudgets({ ctx, input: { views: rows.map(instanceView) } });
}

export const ListInstanceModelsInput = z.object({ tenant_id: ResourceId, alias: ResourceId });

export type InstanceModels = { models: { alias: string; createdAt: Date }[]; providerBody?: Buffer };

/**
 * The models an instance serves now. Managed: its listed models (or all),
 * enabled and priced. Bring-your-own-key: the provider's own listing, asked
 * with the instance's key and answered unchanged.
 */
export async function listInstanceModels({
  ctx,
  input,
  signal,
}: {
  ctx: ManagedAiContext;
  input: z.input<typeof ListInstanceModelsInput>;
  signal?: AbortSignal;
}): Promise<InstanceModels> {
  const q = parseInput(ListInstanceModelsInput, input);
  const row = await ctx.store.instances.get(q.tenant_id, q.alias);
  if (!row) throw new AppError("not_found", `No ai-model instance ${q.alias}.`);
  const managed = managedConfigOf(row);
  if (!managed) {
    if (row.status !== "active") throw new AppError("forbidden", `The instance ${q.alias} is disabled.`);
    const target = await byokTarget({ ctx, input: { instance: row } });
    try {
      const listing = await ctx.provider.models({ ...target, ...(signal ? { signal } : {}) });
      return { models: [], providerBody: Buffer.from(JSON.stringify(listing)) };
    } catch (err) {
      throw ctx.provider.asTransportFailure(err, signal).appError;
    }
  }
  return { models: await ctx.store.models.servable(managed.models ?? null) };
}
