import { z } from "zod";
import { UnitsNumber } from "@gateway/contract";
import { Timestamp } from "./common.types.js";

/** Request and response schemas of /ops/ai/models/:alias/prices (CONTRACT.md section 5): immutable price versions. */

export const PriceVersion = z.object({
  id: z.string(),
  model_alias: z.string(),
  version: z.number().int().describe("1, 2, 3 ... per model"),
  input_units_per_mtok: UnitsNumber,
  output_units_per_mtok: UnitsNumber,
  created_at: Timestamp,
});

export const PublishPriceRequest = z.strictObject({
  input_units_per_mtok: UnitsNumber.describe("Units of USD 0.0001 per million input tokens."),
  output_units_per_mtok: UnitsNumber.describe("Units of USD 0.0001 per million output tokens."),
});
export type PublishPriceRequest = z.infer<typeof PublishPriceRequest>;

export const PricesResponse = z.object({ data: z.array(PriceVersion).describe("Newest first, at most 100.") });
