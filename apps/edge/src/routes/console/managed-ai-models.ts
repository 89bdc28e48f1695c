import { z } from "zod";
import type { EdgeDeps } from "../../deps.js";
import { sessionPrincipal } from "../../http/access.js";
import { defineRoute } from "../../http/route.js";
import { UnitsNumber, unitsToNumber } from "@gateway/contract";

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

export const listManagedAiModels = defineRoute<EdgeDeps>({
  method: "get",
  path: "/console/services/managed-ai/models",
  summary: "The caller tenant's effective model prices: list price versions and its own discounts.",
  tags: ["console", "managed-ai"],
  access: { kind: "tenant", minRole: "member" },
  responses: { 200: { description: "effective prices", schema: CustomerModelsResponse } },
  async handler({ deps, principal }) {
    const { models } = await deps.services.managedAi.ListCustomerModels({ tenant_id: sessionPrincipal(principal).tenantId });
    return {
      status: 200,
      body: {
        data: models.map((m) => ({
          alias: m.alias,
          enabled: m.enabled,
          price_id: m.price_id,
          input_units_per_mtok: unitsToNumber(m.input_units_per_mtok),
          output_units_per_mtok: unitsToNumber(m.output_units_per_mtok),
          discount_bps: m.discount_bps,
        })),
      },
    };
  },
});
