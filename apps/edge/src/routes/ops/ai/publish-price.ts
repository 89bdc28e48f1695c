import type { EdgeDeps } from "../../../deps.js";
import { defineRoute } from "../../../http/route.js";
import { ModelParams, ModelResponse, PublishPriceRequest } from "./ai.types.js";
import { modelJson } from "./encode.js";

export const publishPrice = defineRoute<EdgeDeps, ModelParams, Record<string, never>, PublishPriceRequest>({
  method: "post",
  path: "/ops/ai/models/:alias/prices",
  summary: "Publish a new immutable price version of a model; it applies to new requests.",
  tags: ["ops", "managed-ai"],
  access: { kind: "platform", level: "write" },
  params: ModelParams,
  body: PublishPriceRequest,
  responses: {
    201: { description: "the model with its new price", schema: ModelResponse },
    404: { description: "no such model" },
  },
  async handler({ deps, params, body }) {
    return { status: 201, body: { data: modelJson(await deps.services.managedAi.PublishPrice({ model_alias: params.alias, ...body })) } };
  },
});
