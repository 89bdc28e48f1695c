import { z } from "zod";
import { Id } from "@gateway/contract";
import { AppError, parseInput } from "@gateway/errors";
import type { MessagingContext } from "../../db.js";
import type { AppInstance } from "../../generated/prisma/client.js";

export const ListAppInstancesInput = z.object({ tenant_id: Id });

/** The tenant's webhook-push and socialops instances, newest first (at most 200). */
export async function listAppInstances({ ctx, input }: { ctx: MessagingContext; input: z.input<typeof ListAppInstancesInput> }): Promise<AppInstance[]> {
  const { tenant_id } = parseInput(ListAppInstancesInput, input);
  return ctx.prisma.appInstance.findMany({ where: { tenantId: tenant_id }, orderBy: [{ createdAt: "desc" }, { id: "desc" }], take: 200 });
}

/** The tenant's active instance of a kind by alias: 404 when there is none (another tenant's is none), 403 when it is disabled. */
export async function activeInstance(ctx: MessagingContext, tenantId: string, serviceId: "webhook-push" | "socialops", alias: string): Promise<AppInstance> {
  const row = await ctx.prisma.appInstance.findUnique({ where: { tenantId_serviceId_alias: { tenantId, serviceId, alias } } });
  if (!row) throw new AppError("not_found", `No ${serviceId} instance ${alias}.`);
  if (row.status !== "active") throw new AppError("forbidden", `The instance ${alias} is disabled.`);
  return row;
}
