import { z } from "zod";
import { AppError, parseInput } from "@gateway/errors";
import { newId } from "@gateway/ids";
import type { ManagedAiContext } from "../../db.js";
import { Actor, ResourceId } from "../schemas.js";
import { instanceView, type InstanceView, type ManagedConfig } from "./view.js";

export const PutInstanceInput = z.object({
  actor: Actor,
  tenant_id: ResourceId,
  alias: ResourceId,
  status: z.enum(["active", "disabled"]),
  mode: z.literal("managed", "mode must be managed (bring-your-own-key instances come later)"),
  default_model: ResourceId,
  models: z.array(ResourceId).max(200).default([]),
  max_tokens_per_request: z.number().int().min(1).max(10_000_000).optional(),
  max_cost_per_request: z.number().min(0).max(1_000_000).optional(),
});
export type PutInstanceInput = z.input<typeof PutInstanceInput>;

/**
 * Creates the tenant's ai-model instance under `alias`, or updates it (the same
 * call with an existing alias). Its default model and listed models must be
 * managed models; the default must be among the listed ones when a list is given.
 */
export async function putInstance({ ctx, input }: { ctx: ManagedAiContext; input: PutInstanceInput }): Promise<InstanceView> {
  const q = parseInput(PutInstanceInput, input);
  const models = [...new Set(q.models)];
  if (models.length > 0 && !models.includes(q.default_model)) {
    throw new AppError("validation_failed", "default_model must be one of models", { extra: { param: "default_model" } });
  }
  const known = await ctx.prisma.model.findMany({ where: { alias: { in: [q.default_model, ...models] } }, select: { alias: true } });
  const missing = [q.default_model, ...models].find((alias) => !known.some((m) => m.alias === alias));
  if (missing) throw new AppError("validation_failed", `${missing} is not a managed model`, { extra: { param: missing === q.default_model ? "default_model" : "models" } });

  const config: ManagedConfig = {
    mode: "managed",
    default_model: q.default_model,
    ...(models.length > 0 ? { models } : {}),
    ...(q.max_tokens_per_request !== undefined ? { max_tokens_per_request: q.max_tokens_per_request } : {}),
    ...(q.max_cost_per_request !== undefined ? { max_cost_per_request: q.max_cost_per_request } : {}),
  };
  const row = await ctx.transact(async (tx, emit) => {
    const existing = await tx.serviceInstance.findUnique({ where: { tenantId_serviceId_alias: { tenantId: q.tenant_id, serviceId: "ai-model", alias: q.alias } } });
    const saved = existing
      ? await tx.serviceInstance.update({
          where: { id: existing.id },
          data: { status: q.status, mode: q.mode, config: config as object, version: { increment: 1 } },
        })
      : await tx.serviceInstance.create({
          data: { id: newId("inst"), tenantId: q.tenant_id, serviceId: "ai-model", alias: q.alias, status: q.status, mode: q.mode, config: config as object, version: 1 },
        });
    await emit("managed_ai.instance_changed", {
      actor: q.actor,
      instance_id: saved.id,
      tenant_id: saved.tenantId,
      alias: saved.alias,
      change: existing ? "updated" : "created",
      status: saved.status,
      default_model: q.default_model,
    });
    return saved;
  });
  return instanceView(row);
}
