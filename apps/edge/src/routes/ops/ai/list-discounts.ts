import type { EdgeDeps } from "../../../deps.js";
import { defineRoute } from "../../../http/route.js";
import { DiscountsQuery, DiscountsResponse } from "./ai.types.js";
import { offerJson } from "./encode.js";

export const listDiscounts = defineRoute<EdgeDeps, Record<string, never>, DiscountsQuery>({
  method: "get",
  path: "/ops/ai/discounts",
  summary: "Customer offers, newest first (latest 200), optionally of one tenant and/or model.",
  tags: ["ops", "managed-ai"],
  access: { kind: "platform", level: "read" },
  query: DiscountsQuery,
  responses: { 200: { description: "offers", schema: DiscountsResponse } },
  async handler({ deps, query }) {
    const { offers } = await deps.services.managedAi.ListOffers({ tenant_id: query.tenant_id ?? "", model_alias: query.model_alias ?? "" });
    return { status: 200, body: { data: offers.map(offerJson) } };
  },
});
