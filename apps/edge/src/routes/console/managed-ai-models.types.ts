import { z } from "zod";
import { UnitsNumber } from "@gateway/contract";

/** GET /console/services/managed-ai/models: the caller tenant's effective prices. */
export const CustomerModelsResponse = z.object({
  data: z
    .array(
      z.object({
        alias: z.string(),
        enabled: z.boolean(),
        price_id: z.string().describe("The price version that applies to new requests."),
        input_units_per_mtok: UnitsNumber.describe("List price, units of USD 0.0001 per million input tokens."),
        output_units_per_mtok: UnitsNumber.describe("List price, units of USD 0.0001 per million output tokens."),
        discount_bps: z
          .number()
          .int()
          .describe("The caller tenant's discount (0 without an unexpired offer); applied in the cost formula, not to these prices."),
      }),
    )
    .describe("Every model with a published price, newest first."),
});
