import { z } from "zod";
import { Id } from "@gateway/contract";
import { ExpectedVersion, Timestamp } from "./common.types.js";
import { PriceVersion } from "./prices.types.js";

/** Request and response schemas of /ops/ai/models (CONTRACT.md section 5). */

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
