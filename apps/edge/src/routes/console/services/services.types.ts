import { z } from "zod";
import { Id, UnitsNumber, usdAmount } from "@gateway/contract";
import { BudgetFields, BudgetState, bothOrNeither } from "../budget.types.js";
import { PutPushServiceRequest, PutSocialOpsServiceRequest } from "./messaging-services.types.js";

export const ManagedConfig = z.strictObject({
  mode: z.literal("managed"),
  default_model: Id.describe("Model alias used when a request names none."),
  models: z.array(Id).max(200).optional().describe("Model aliases this instance serves; absent: every enabled model."),
  max_tokens_per_request: z.number().int().min(1).max(10_000_000).optional(),
  max_cost_per_request: usdAmount(1_000_000).optional().describe("USD; a request whose worst case costs more gets 409."),
  ...BudgetFields,
});

/** Spec 2.3: a bring-your-own-key instance; the key inline (`api_key`) or in a connected account (top-level `connected_account_id`). */
export const ByokConfig = z.strictObject({
  mode: z.literal("byok"),
  provider: z.literal("openai", 'config.provider must be "openai" (any OpenAI-compatible API)'),
  base_url: z
    .url({ protocol: /^https?$/, error: "config.base_url must be an http(s) URL" })
    .max(2048)
    .describe("The provider's API base, e.g. https://api.openai.com/v1."),
  default_model: z
    .string()
    .regex(/^[\x21-\x7e]{1,256}$/, "must be a provider model name")
    .describe("The provider's model used when a request names none."),
  api_key: z.string().min(1).max(4096).optional().describe('The provider key (secret): stored encrypted, shown as "[redacted]".'),
  max_tokens_per_request: z.number().int().min(1).max(10_000_000).optional(),
  max_cost_per_request: usdAmount(1_000_000).optional().describe("USD; a request whose worst-case estimate at `pricing` is above it gets 409."),
  pricing: z
    .strictObject({ input_units_per_mtok: UnitsNumber, output_units_per_mtok: UnitsNumber })
    .optional()
    .describe("The customer's own provider prices (units per million tokens), for the cost headers, ceilings, usage records and budgets; nothing is charged."),
  ...BudgetFields,
});

export const AiModelService = z
  .strictObject({
    service_id: z.literal("ai-model"),
    alias: Id,
    status: z.enum(["active", "disabled"]),
    config: z.discriminatedUnion("mode", [ManagedConfig, ByokConfig], { error: 'config.mode must be "managed" or "byok"' }),
    connected_account_id: Id.optional().describe("byok: a connected account holding the provider key, instead of config.api_key."),
  })
  .superRefine((body, ctx) => {
    bothOrNeither(body.config, ctx, ["config"]);
    if (body.config.mode === "managed") {
      if (body.connected_account_id !== undefined) ctx.addIssue({ code: "custom", path: ["connected_account_id"], message: "is for byok instances only" });
    } else if ((body.config.api_key === undefined) === (body.connected_account_id === undefined)) {
      ctx.addIssue({ code: "custom", path: ["config", "api_key"], message: "send exactly one of config.api_key or connected_account_id" });
    }
  });
export type AiModelService = z.infer<typeof AiModelService>;

/**
 * The body of `POST /console/services`, one member per `service_id`; each is
 * handled by the service that owns it (see owners.ts).
 */
export const PutServiceRequest = z.discriminatedUnion("service_id", [AiModelService, PutPushServiceRequest, PutSocialOpsServiceRequest], {
  error: "service_id must be one of: ai-model, webhook-push, socialops",
});
export type PutServiceRequest = z.infer<typeof PutServiceRequest>;

/** An instance as listed: common fields; `config` is the owning service's, with secrets as "[redacted]". */
export const ServiceInstance = z
  .object({
    id: z.string(),
    service_id: z.string(),
    alias: z.string(),
    status: z.enum(["active", "disabled"]),
    config: z.record(z.string(), z.unknown()),
    budget: BudgetState.optional().describe(
      "ai-model instances: the spend budget's current period (config.budget_units per config.budget_period); null: none.",
    ),
    version: z.number().int(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .loose();
export type ServiceInstanceJson = z.infer<typeof ServiceInstance>;
export const ServiceResponse = z.object({ data: ServiceInstance });
export const ServiceListResponse = z.object({ data: z.array(ServiceInstance) });
