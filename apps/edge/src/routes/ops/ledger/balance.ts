import { forward, ok } from "../../forward.js";
import { opsRead } from "../ops-access.js";
import { existingTenant } from "../existing-tenant.js";
import { unitsToNumber } from "@gateway/contract";
import { TenantBalanceResponse, TenantParams } from "./ledger.types.js";

export const getTenantBalance = forward(opsRead("ledger"), "get /ops/ledger/tenants/:tenant_id", {
  summary: "A tenant's balance (operators).",
  params: TenantParams,
  responses: { 200: ["balance", TenantBalanceResponse], 404: "no such tenant" },
  async call({ deps, params }) {
    const tenantId = await existingTenant(deps, params.tenant_id);
    return { tenantId, balance: await deps.services.ledger.GetBalance({ tenant_id: tenantId }) };
  },
  answer: ({ tenantId, balance: b }) =>
    ok({ tenant_id: tenantId, currency: "USD", available_units: unitsToNumber(b.available_units), reserved_units: unitsToNumber(b.reserved_units) }),
});
