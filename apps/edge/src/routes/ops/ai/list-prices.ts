import type { EdgeDeps } from "../../../deps.js";
import { defineRoute } from "../../../http/route.js";
import { ModelParams, PricesResponse } from "./ai.types.js";
import { priceJson } from "./encode.js";

export const listPrices = defineRoute<EdgeDeps, ModelParams>({
  method: "get",
  path: "/ops/ai/models/:alias/prices",
  summary: "A model's price versions, newest first (latest 100).",
  tags: ["ops", "managed-ai"],
  access: { kind: "platform", level: "read" },
  params: ModelParams,
  responses: { 200: { description: "price versions", schema: PricesResponse }, 404: { description: "no such model" } },
  async handler({ deps, params }) {
    const { prices } = await deps.services.managedAi.ListPrices({ model_alias: params.alias });
    return { status: 200, body: { data: prices.map(priceJson) } };
  },
});
