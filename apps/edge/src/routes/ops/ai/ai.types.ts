import { z } from "zod";
import { Id, UnitsNumber } from "@gateway/contract";

/**
 * Request and response schemas of /ops/ai (CONTRACT.md section 5). They validate
 * requests and produce the OpenAPI document. Writes reject unknown fields.
 */

const Timestamp = z.string().describe("ISO 8601 UTC");

/** `version` of a versioned write: absent for no check; else the current version (0 to create). */
export const ExpectedVersion = z
  .number()
  .int()
  .min(0)
  .max(2_147_483_647)
  .optional()
  .describe("The version this write replaces: 409 unless it is the current one. 0 (or absent) creates. Absent: no check.");

// Upstreams

export const UpstreamParams = z.object({ id: Id });
export type UpstreamParams = z.infer<typeof UpstreamParams>;

export const PutUpstreamRequest = z.strictObject({
  provider: z.literal("openai").describe("Any OpenAI-compatible chat API."),
  base_url: z.string().min(1).max(2048).describe("http(s) base URL of the API, e.g. https://api.openai.com/v1 (no credentials, query or fragment)."),
  api_key: z
    .string()
    .regex(/^[\x21-\x7e]{1,4096}$/, "must be 1-4096 printable ASCII characters without spaces")
    .optional()
    .describe("Stored encrypted, never returned. Absent: keep the stored key; present: replace it (rotation)."),
  enabled: z.boolean().optional().describe("Default true on create; absent keeps the current value."),
  version: ExpectedVersion,
});
export type PutUpstreamRequest = z.infer<typeof PutUpstreamRequest>;

export const PutUpstreamResponse = z.object({ data: z.object({ id: z.string(), version: z.number().int(), key_configured: z.boolean() }) });

export const Upstream = z.object({
  id: z.string(),
  provider: z.string(),
  base_url: z.string(),
  enabled: z.boolean(),
  key_configured: z.boolean(),
  version: z.number().int(),
  created_at: Timestamp,
  updated_at: Timestamp,
});
export const UpstreamsResponse = z.object({ data: z.array(Upstream).describe("Newest first, at most 200; never credentials.") });

export const TestUpstreamResponse = z.object({
  data: z.object({
    reachable: z.boolean().describe("An HTTP answer came from GET {base_url}/models."),
    authenticated: z.boolean().describe("The answer was 2xx."),
    upstream_status: z.number().int().nullable().describe("The answer's status; null when unreachable (refused, timed out)."),
  }),
});

// Models and prices

export const ModelParams = z.object({ alias: Id });
export type ModelParams = z.infer<typeof ModelParams>;

export const PutModelRequest = z.strictObject({
  upstream_id: Id.describe("An existing upstream (404 otherwise)."),
  upstream_model: z
    .string()
    .regex(/^[\x21-\x7e]{1,256}$/, "must be 1-256 printable ASCII characters without spaces")
    .describe("The provider's model name."),
  enabled: z.boolean().optional().describe("Default true on create; absent keeps the current value."),
  max_output_tokens: z.number().int().min(1).max(1_000_000).optional().describe("Default 4096 on create; absent keeps the current value."),
  max_tokens_per_image: z
    .number()
    .int()
    .min(1)
    .max(1_000_000)
    .nullable()
    .optional()
    .describe(
      "The most input tokens the provider counts for one image part; null (the default on create): the model refuses image parts; absent keeps the current value.",
    ),
  version: ExpectedVersion,
});
export type PutModelRequest = z.infer<typeof PutModelRequest>;

export const PriceVersion = z.object({
  id: z.string(),
  model_alias: z.string(),
  version: z.number().int().describe("1, 2, 3 ... per model"),
  input_units_per_mtok: UnitsNumber,
  output_units_per_mtok: UnitsNumber,
  created_at: Timestamp,
});

export const Model = z.object({
  alias: z.string(),
  upstream_id: z.string(),
  upstream_model: z.string(),
  enabled: z.boolean(),
  max_output_tokens: z.number().int(),
  max_tokens_per_image: z.number().int().nullable().describe("The most input tokens one image part counts in a reservation; null: image parts are refused."),
  version: z.number().int(),
  price: PriceVersion.nullable().describe("The newest price version (applies to new requests); null before the first."),
  created_at: Timestamp,
  updated_at: Timestamp,
});
export const ModelResponse = z.object({ data: Model });
export const ModelsResponse = z.object({ data: z.array(Model).describe("Newest first, at most 200.") });

export const PublishPriceRequest = z.strictObject({
  input_units_per_mtok: UnitsNumber.describe("Units of USD 0.0001 per million input tokens."),
  output_units_per_mtok: UnitsNumber.describe("Units of USD 0.0001 per million output tokens."),
});
export type PublishPriceRequest = z.infer<typeof PublishPriceRequest>;

export const PricesResponse = z.object({ data: z.array(PriceVersion).describe("Newest first, at most 100.") });

// Offers (discounts)

export const PutDiscountRequest = z.strictObject({
  tenant_id: Id.describe("An existing tenant (404 otherwise)."),
  model_alias: Id.describe("An existing model (404 otherwise)."),
  discount_bps: z.number().int().min(0).max(10_000).describe("Basis points off the list price."),
  expires_at: z.iso.datetime().nullable().optional().describe("ISO 8601 UTC; null removes the expiry; absent keeps it (none on create)."),
  version: ExpectedVersion,
});
export type PutDiscountRequest = z.infer<typeof PutDiscountRequest>;

export const PutDiscountResponse = z.object({ data: z.object({ id: z.string(), version: z.number().int() }) });

export const DiscountsQuery = z.object({
  tenant_id: Id.optional().describe("Only this tenant's offers."),
  model_alias: Id.optional().describe("Only offers on this model."),
});
export type DiscountsQuery = z.infer<typeof DiscountsQuery>;

export const Offer = z.object({
  id: z.string(),
  tenant_id: z.string(),
  model_alias: z.string(),
  discount_bps: z.number().int(),
  expires_at: Timestamp.nullable(),
  version: z.number().int(),
  created_at: Timestamp,
  updated_at: Timestamp,
});
export const DiscountsResponse = z.object({ data: z.array(Offer).describe("Newest first, at most 200.") });
