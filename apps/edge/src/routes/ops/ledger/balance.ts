import type { EdgeDeps } from "../../../deps.js";
import { defineRoute } from "../../../http/route.js";
import { existingTenant } from "../existing-tenant.js";
import { unitsToNumber } from "@gateway/contract";
import { TenantBalanceResponse, TenantParams } from "./ledger.types.js";

export const getTenantBalance = defineRoute<EdgeDeps, TenantParams>({
  method: "get",
  path: "/ops/ledger/tenants/:tenant_id",
  summary: "A tenant's balance (operators).",
  tags: ["ops", "ledger"],
  access: { kind: "platform", level: "read" },
  params: TenantParams,
  responses: { 200: { description: "balance", schema: TenantBalanceResponse }, 404: { description: "no such tenant" } },
  async handler({ deps, params }) {
    const tenantId = await existingTenant(deps, params.tenant_id);
    const b = await deps.services.ledger.GetBalance({ tenant_id: tenantId });
    return {
      status: 200,
      body: {
        data: {
          tenant_id: tenantId,
          currency: "USD",
          available_units: unitsToNumber(b.available_units),
          reserved_units: unitsToNumber(b.reserved_units),
        },
      },
    };
  },
});
