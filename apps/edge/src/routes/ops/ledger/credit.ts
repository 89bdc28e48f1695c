import type { EdgeDeps } from "../../../deps.js";
import { defineRoute } from "../../../http/route.js";
import { existingTenant } from "../existing-tenant.js";
import { type IdempotencyKeyHeader, unitsToNumber } from "@gateway/contract";
import { creditOperation } from "@gateway/ledger-client";
import { CreditHeaders, CreditRequest, CreditResponse, TenantParams } from "./ledger.types.js";

export const postCredit = defineRoute<EdgeDeps, TenantParams, Record<string, never>, CreditRequest, IdempotencyKeyHeader>({
  method: "post",
  path: "/ops/ledger/tenants/:tenant_id/credits",
  summary: "Top up a tenant's balance. With Idempotency-Key, a repeat returns the same entry and credits once.",
  tags: ["ops", "ledger"],
  access: { kind: "platform", level: "write" },
  params: TenantParams,
  body: CreditRequest,
  headers: CreditHeaders,
  responses: {
    201: { description: "credited (or the stored result of the same Idempotency-Key)", schema: CreditResponse },
    404: { description: "no such tenant" },
    409: { description: "Idempotency-Key already used for a different credit" },
  },
  async handler({ deps, params, body, headers, requestId }) {
    const key = headers["Idempotency-Key"];
    const tenantId = await existingTenant(deps, params.tenant_id);
    const result = await deps.services.ledger.Credit({
      operation_id: creditOperation(tenantId, key, requestId),
      tenant_id: tenantId,
      units: body.units,
      reason: body.reason,
    });
    return {
      status: 201,
      body: { data: { entry_id: result.entry_id, available_units: unitsToNumber(result.balance?.available_units ?? "0") } },
    };
  },
});
