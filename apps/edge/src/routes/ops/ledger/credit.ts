import { created, forward } from "../../forward.js";
import { opsWrite } from "../ops-access.js";
import { existingTenant } from "../existing-tenant.js";
import { unitsToNumber } from "@gateway/contract";
import { creditOperation } from "@gateway/ledger-client";
import { CreditHeaders, CreditRequest, CreditResponse, TenantParams } from "./ledger.types.js";

export const postCredit = forward(opsWrite("ledger"), "post /ops/ledger/tenants/:tenant_id/credits", {
  summary: "Top up a tenant's balance. With Idempotency-Key, a repeat returns the same entry and credits once.",
  params: TenantParams,
  body: CreditRequest,
  headers: CreditHeaders,
  responses: {
    201: ["credited (or the stored result of the same Idempotency-Key)", CreditResponse],
    404: "no such tenant",
    409: "Idempotency-Key already used for a different credit",
  },
  async call({ deps, params, body, headers, requestId }) {
    const tenantId = await existingTenant(deps, params.tenant_id);
    const operation_id = creditOperation(tenantId, headers["Idempotency-Key"], requestId);
    return deps.services.ledger.Credit({ operation_id, tenant_id: tenantId, units: body.units, reason: body.reason });
  },
  answer: (result) => created({ entry_id: result.entry_id, available_units: unitsToNumber(result.balance?.available_units ?? "0") }),
});
