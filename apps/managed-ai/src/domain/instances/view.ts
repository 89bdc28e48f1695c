import type { ServiceInstance } from "../../generated/prisma/client.js";

/** The config of a managed ai-model instance, as stored (CONTRACT.md section 6). */
export type ManagedConfig = {
  mode: "managed";
  default_model: string;
  models?: string[];
  max_tokens_per_request?: number;
  max_cost_per_request?: number;
};

export type InstanceView = ServiceInstance & { managed: ManagedConfig };

export function configOf(row: ServiceInstance): ManagedConfig {
  return row.config as unknown as ManagedConfig;
}

export function instanceView(row: ServiceInstance): InstanceView {
  return { ...row, managed: configOf(row) };
}
