import type { ServiceInstance } from "../rows.js";
import type { BudgetView } from "../budgets/budget.js";
import type { BudgetPeriod } from "../budgets/period.js";

/** A spend budget on an instance (docs/decisions/0024): units (a decimal string: int64) per UTC period, both or neither. */
export type InstanceBudgetConfig = { budget_units?: string; budget_period?: BudgetPeriod };

/** The config of a managed ai-model instance, as stored (CONTRACT.md section 6). */
export type ManagedConfig = {
  mode: "managed";
  default_model: string;
  models?: string[];
  max_tokens_per_request?: number;
  max_cost_per_request?: number;
} & InstanceBudgetConfig;

/** The customer's own provider prices, units of USD 0.0001 per million tokens (decimal strings: int64). */
export type ByokPricing = { input_units_per_mtok: string; output_units_per_mtok: string };

/**
 * The config of a bring-your-own-key instance (CONTRACT.md section 7), as
 * stored: never the key, which lives sealed in its own columns or in a
 * connected account.
 */
export type ByokConfig = {
  mode: "byok";
  provider: "openai";
  base_url: string;
  default_model: string;
  max_tokens_per_request?: number;
  max_cost_per_request?: number;
  pricing?: ByokPricing;
} & InstanceBudgetConfig;

export type InstanceConfig = ManagedConfig | ByokConfig;

/** An instance as the service answers it: its config, whether an inline key is stored, never the key. */
export type InstanceView = Omit<ServiceInstance, "config" | "apiKeyCiphertext" | "apiKeyKeyId"> & {
  config: InstanceConfig;
  apiKeyConfigured: boolean;
  /** The spend budget's current period (filled by `withBudgets`); null without a budget. */
  budget?: BudgetView | null;
};

export function configOf(row: ServiceInstance): InstanceConfig {
  const config = row.config as InstanceConfig;
  return (row.mode === "byok" ? { ...config, mode: "byok" } : { ...config, mode: "managed" }) as InstanceConfig;
}

/** The config of a managed instance (the only kind that lists managed models). */
export function managedConfigOf(row: ServiceInstance): ManagedConfig | null {
  const config = configOf(row);
  return config.mode === "managed" ? config : null;
}

export function instanceView(row: ServiceInstance): InstanceView {
  const { apiKeyCiphertext, apiKeyKeyId: _keyId, ...rest } = row;
  return { ...rest, config: configOf(row), apiKeyConfigured: apiKeyCiphertext !== null };
}
