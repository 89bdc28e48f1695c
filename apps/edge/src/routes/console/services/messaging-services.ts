import type { messaging } from "@gateway/protos";
import type { z } from "zod";
import type { EdgeDeps } from "../../../deps.js";
import type { PutPushServiceRequest, PutSocialOpsServiceRequest } from "./messaging-services.types.js";
import type { ServiceInstanceJson } from "./services.types.js";
import { budgetJson } from "../budget.types.js";

/** A messaging instance in the shape every instance is listed in. */
export function appInstanceJson(i: messaging.AppInstance__Output): ServiceInstanceJson {
  return {
    id: i.id,
    service_id: i.service_id,
    alias: i.alias,
    status: i.status === "active" ? "active" : "disabled",
    config: JSON.parse(i.config_json) as Record<string, unknown>,
    version: i.version,
    created_at: i.created_at,
    updated_at: i.updated_at,
  };
}

/** `POST /console/services` for webhook-push and socialops: owned by messaging. */
export async function putMessagingInstance(
  deps: EdgeDeps,
  tenantId: string,
  body: z.infer<typeof PutPushServiceRequest> | z.infer<typeof PutSocialOpsServiceRequest>,
) {
  const instance = await deps.services.messaging.PutAppInstance({
    tenant_id: tenantId,
    service_id: body.service_id,
    alias: body.alias,
    status: body.status,
    config_json: JSON.stringify(body.config),
  });
  return (await withPushBudgets(deps, [appInstanceJson(instance)]))[0]!;
}

export async function listMessagingInstances(deps: EdgeDeps, tenantId: string) {
  return withPushBudgets(deps, (await deps.services.messaging.ListAppInstances({ tenant_id: tenantId })).instances.map(appInstanceJson));
}

/** Push instances with their budget's current period (kept by managed-ai, docs/decisions/0024); one call for the list. */
async function withPushBudgets(deps: EdgeDeps, instances: ServiceInstanceJson[]): Promise<ServiceInstanceJson[]> {
  const budgeted = instances.filter(
    (i) => i.service_id === "webhook-push" && typeof i.config.budget_units === "number" && typeof i.config.budget_period === "string",
  );
  if (budgeted.length === 0) return instances.map((i) => (i.service_id === "webhook-push" ? { ...i, budget: null } : i));
  const states = (
    await deps.services.managedAi.GetBudgets({
      budgets: budgeted.map((i) => ({ scope: "instance", id: i.id, limit_units: String(i.config.budget_units), period: String(i.config.budget_period) })),
    })
  ).budgets;
  const byId = new Map(budgeted.map((i, n) => [i.id, budgetJson(states[n])]));
  return instances.map((i) => (i.service_id === "webhook-push" ? { ...i, budget: byId.get(i.id) ?? null } : i));
}
