import { z } from "zod";
import { AppError, parseInput } from "@gateway/errors";
import type { ManagedAiContext } from "../../db.js";
import { ResourceId } from "../schemas.js";
import { configOf, instanceView, type InstanceView } from "./view.js";

export const ListInstancesInput = z.object({ tenant_id: ResourceId });

/** The tenant's instances, newest first (at most 200). */
export async function listInstances({ ctx, input }: { ctx: ManagedAiContext; input: z.input<typeof ListInstancesInput> }): Promise<InstanceView[]> {
  const { tenant_id } = parseInput(ListInstancesInput, input);
  const rows = await ctx.prisma.serviceInstance.findMany({ where: { tenantId: tenant_id }, orderBy: [{ createdAt: "desc" }, { id: "desc" }], take: 200 });
  return rows.map(instanceView);
}

export const ListInstanceModelsInput = z.object({ tenant_id: ResourceId, alias: ResourceId });

/** The models an instance serves now: its listed models (or all), enabled and priced. */
export async function listInstanceModels({
  ctx,
  input,
}: {
  ctx: ManagedAiContext;
  input: z.input<typeof ListInstanceModelsInput>;
}): Promise<{ alias: string; createdAt: Date }[]> {
  const q = parseInput(ListInstanceModelsInput, input);
  const row = await ctx.prisma.serviceInstance.findUnique({ where: { tenantId_serviceId_alias: { tenantId: q.tenant_id, serviceId: "ai-model", alias: q.alias } } });
  if (!row) throw new AppError("not_found", `No ai-model instance ${q.alias}.`);
  const listed = configOf(row).models;
  return ctx.prisma.model.findMany({
    where: { enabled: true, prices: { some: {} }, ...(listed && listed.length > 0 ? { alias: { in: listed } } : {}) },
    select: { alias: true, createdAt: true },
    orderBy: [{ createdAt: "desc" }, { alias: "asc" }],
    take: 200,
  });
}
