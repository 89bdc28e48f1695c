import type { managedAi } from "@gateway/protos";
import type { EdgeDeps } from "../../../deps.js";
import { unitsToNumber } from "@gateway/contract";
import { budgetJson } from "../budget.types.js";
import type { AiModelService, ServiceInstanceJson } from "./services.types.js";

export const REDACTED = "[redacted]";

/** An ai-model instance as the console shows it; a byok key only as "[redacted]". */
export function aiModelJson(i: managedAi.Instance__Output): ServiceInstanceJson {
  const common = {
    max_tokens_per_request: i.max_tokens_per_request ?? null,
    max_cost_per_request: i.max_cost_per_request ?? null,
    budget_units: i.budget ? unitsToNumber(i.budget.limit_units) : null,
    budget_period: i.budget?.period ?? null,
  };
  const config =
    i.mode === "byok"
      ? {
          mode: "byok",
          provider: i.provider,
          base_url: i.base_url,
          default_model: i.default_model,
          api_key: i.api_key_configured ? REDACTED : null,
          ...common,
          pricing: i.pricing
            ? { input_units_per_mtok: unitsToNumber(i.pricing.input_units_per_mtok), output_units_per_mtok: unitsToNumber(i.pricing.output_units_per_mtok) }
            : null,
        }
      : { mode: i.mode, default_model: i.default_model, models: i.models.length > 0 ? i.models : null, ...common };
  return {
    id: i.id,
    service_id: i.service_id,
    alias: i.alias,
    status: i.status as "active" | "disabled",
    config,
    ...(i.mode === "byok" ? { connected_account_id: i.connected_account_id || null } : {}),
    budget: budgetJson(i.budget),
    version: i.version,
    created_at: i.created_at,
    updated_at: i.updated_at,
  };
}

/** `ai-model` instances live in managed-ai. */
export const aiModelOwner = {
  async put(deps: EdgeDeps, tenantId: string, body: AiModelService): Promise<ServiceInstanceJson> {
    const c = body.config;
    const common = {
      tenant_id: tenantId,
      alias: body.alias,
      status: body.status,
      default_model: c.default_model,
      ...(c.max_tokens_per_request !== undefined ? { max_tokens_per_request: c.max_tokens_per_request } : {}),
      ...(c.max_cost_per_request !== undefined ? { max_cost_per_request: c.max_cost_per_request } : {}),
      ...(c.budget_units !== undefined && c.budget_period !== undefined ? { budget_units: String(c.budget_units), budget_period: c.budget_period } : {}),
    };
    const instance = await deps.services.managedAi.PutInstance(
      c.mode === "managed"
        ? { ...common, mode: "managed", models: c.models ?? [] }
        : {
            ...common,
            mode: "byok",
            provider: c.provider,
            base_url: c.base_url,
            ...(c.api_key !== undefined ? { api_key: c.api_key } : {}),
            ...(body.connected_account_id !== undefined ? { connected_account_id: body.connected_account_id } : {}),
            ...(c.pricing
              ? { pricing: { input_units_per_mtok: String(c.pricing.input_units_per_mtok), output_units_per_mtok: String(c.pricing.output_units_per_mtok) } }
              : {}),
          },
    );
    return aiModelJson(instance);
  },
  async list(deps: EdgeDeps, tenantId: string): Promise<ServiceInstanceJson[]> {
    return (await deps.services.managedAi.ListInstances({ tenant_id: tenantId })).instances.map(aiModelJson);
  },
};
