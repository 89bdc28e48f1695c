import { unitsToNumber } from "@gateway/contract";
import { forward, ok } from "../forward.js";
import { member } from "./console-access.js";
import { CustomerModelsResponse } from "./managed-ai-models.types.js";

export const listManagedAiModels = forward(member("managed-ai"), "get /console/services/managed-ai/models", {
  summary: "The caller tenant's effective model prices: list price versions and its own discounts.",
  responses: { 200: ["effective prices", CustomerModelsResponse] },
  call: ({ deps, tenantId }) => deps.services.managedAi.ListCustomerModels({ tenant_id: tenantId }),
  answer: ({ models }) =>
    ok(
      models.map((m) => ({
        alias: m.alias,
        enabled: m.enabled,
        price_id: m.price_id,
        input_units_per_mtok: unitsToNumber(m.input_units_per_mtok),
        output_units_per_mtok: unitsToNumber(m.output_units_per_mtok),
        discount_bps: m.discount_bps,
      })),
    ),
});
