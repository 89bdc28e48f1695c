import { forward, ok } from "../forward.js";
import { member } from "./console-access.js";
import { unitsToNumber } from "@gateway/contract";
import { BalanceResponse } from "./balance.types.js";

export const getBalance = forward(member(), "get /console/balance", {
  summary: "The caller tenant's prepaid balance.",
  responses: { 200: ["balance", BalanceResponse] },
  call: ({ deps, tenantId }) => deps.services.ledger.GetBalance({ tenant_id: tenantId }),
  answer: (b) => ok({ currency: "USD", available_units: unitsToNumber(b.available_units), reserved_units: unitsToNumber(b.reserved_units) }),
});
