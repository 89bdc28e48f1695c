import type { EdgeDeps } from "../../deps.js";
import { sessionPrincipal } from "../../http/access.js";
import { defineRoute } from "../../http/route.js";
import { unitsToNumber } from "@gateway/contract";
import { BalanceResponse } from "../ops/ledger/ledger.types.js";

export const getBalance = defineRoute<EdgeDeps>({
  method: "get",
  path: "/console/balance",
  summary: "The caller tenant's prepaid balance.",
  tags: ["console"],
  access: { kind: "tenant", minRole: "member" },
  responses: { 200: { description: "balance", schema: BalanceResponse } },
  async handler({ deps, principal }) {
    const b = await deps.services.ledger.GetBalance({ tenant_id: sessionPrincipal(principal).tenantId });
    return {
      status: 200,
      body: { data: { currency: "USD", available_units: unitsToNumber(b.available_units), reserved_units: unitsToNumber(b.reserved_units) } },
    };
  },
});
