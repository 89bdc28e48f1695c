import { forward, ok } from "../../forward.js";
import { existingTenant } from "../existing-tenant.js";
import { opsRead, opsWrite } from "../ops-access.js";
import { DiscountsQuery, DiscountsResponse, PutDiscountRequest, PutDiscountResponse } from "./discounts.types.js";
import { offerJson } from "./encode.js";

export const listDiscounts = forward(opsRead("managed-ai"), "get /ops/ai/discounts", {
  summary: "Customer offers, newest first (latest 200), optionally of one tenant and/or model.",
  query: DiscountsQuery,
  responses: { 200: ["offers", DiscountsResponse] },
  call: ({ deps, query }) => deps.services.managedAi.ListOffers({ tenant_id: query.tenant_id ?? "", model_alias: query.model_alias ?? "" }),
  answer: ({ offers }) => ok(offers.map(offerJson)),
});

export const putDiscount = forward(opsWrite("managed-ai"), "put /ops/ai/discounts", {
  summary: "Create or replace the one offer (discount) of a tenant on a model.",
  body: PutDiscountRequest,
  responses: {
    200: ["written; the same id for the same tenant and model", PutDiscountResponse],
    404: "tenant_id or model_alias names nothing",
    409: "version is not the current one (or not 0/absent on create)",
  },
  async call({ deps, body }) {
    // Tenants live in the edge's database; managed-ai checks the model.
    await existingTenant(deps, body.tenant_id, `tenant_id: no tenant ${body.tenant_id}.`);
    const { expires_at, ...rest } = body;
    // gRPC: absent keeps the expiry, "" removes it.
    return deps.services.managedAi.PutOffer({ ...rest, ...(expires_at === undefined ? {} : { expires_at: expires_at ?? "" }) });
  },
  answer: ({ id, version }) => ok({ id, version }),
});
