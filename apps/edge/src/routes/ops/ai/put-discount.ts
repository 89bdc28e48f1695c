import type { EdgeDeps } from "../../../deps.js";
import { defineRoute } from "../../../http/route.js";
import { existingTenant } from "../existing-tenant.js";
import { PutDiscountRequest, PutDiscountResponse } from "./ai.types.js";

export const putDiscount = defineRoute<EdgeDeps, Record<string, never>, Record<string, never>, PutDiscountRequest>({
  method: "put",
  path: "/ops/ai/discounts",
  summary: "Create or replace the one offer (discount) of a tenant on a model.",
  tags: ["ops", "managed-ai"],
  access: { kind: "platform", level: "write" },
  body: PutDiscountRequest,
  responses: {
    200: { description: "written; the same id for the same tenant and model", schema: PutDiscountResponse },
    404: { description: "tenant_id or model_alias names nothing" },
    409: { description: "version is not the current one (or not 0/absent on create)" },
  },
  async handler({ deps, body }) {
    // Tenants live in the edge's database; managed-ai checks the model.
    await existingTenant(deps, body.tenant_id, `tenant_id: no tenant ${body.tenant_id}.`);
    const { expires_at, ...rest } = body;
    const result = await deps.services.managedAi.PutOffer({
      ...rest,
      // gRPC: absent keeps the expiry, "" removes it.
      ...(expires_at === undefined ? {} : { expires_at: expires_at ?? "" }),
    });
    return { status: 200, body: { data: { id: result.id, version: result.version } } };
  },
});
