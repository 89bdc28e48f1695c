import { z } from "zod";
import { PathId } from "../../../http/units.js";

export const ManagedConfig = z.strictObject({
  mode: z.literal("managed", "config.mode must be managed (bring-your-own-key instances come with a later release)"),
  default_model: PathId.describe("Model alias used when a request names none."),
  models: z.array(PathId).max(200).optional().describe("Model aliases this instance serves; absent: every enabled model."),
  max_tokens_per_request: z.number().int().min(1).max(10_000_000).optional(),
  max_cost_per_request: z.number().min(0).max(1_000_000).optional().describe("USD; a request whose worst case costs more gets 409."),
});

export const PutServiceRequest = z.strictObject({
  service_id: z.literal("ai-model", "service_id must be ai-model (other services come with later releases)"),
  alias: PathId,
  status: z.enum(["active", "disabled"]),
  config: ManagedConfig,
});
export type PutServiceRequest = z.infer<typeof PutServiceRequest>;

export const ServiceInstance = z.object({
  id: z.string(),
  service_id: z.string(),
  alias: z.string(),
  status: z.enum(["active", "disabled"]),
  config: z.object({
    mode: z.string(),
    default_model: z.string(),
    models: z.array(z.string()).nullable(),
    max_tokens_per_request: z.number().int().nullable(),
    max_cost_per_request: z.number().nullable(),
  }),
  version: z.number().int(),
  created_at: z.string(),
  updated_at: z.string(),
});
export const ServiceResponse = z.object({ data: ServiceInstance });
export const ServiceListResponse = z.object({ data: z.array(ServiceInstance) });
