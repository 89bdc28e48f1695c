import { created, forward, ok } from "../../forward.js";
import { opsRead, opsWrite } from "../ops-access.js";
import { modelJson, priceJson } from "./encode.js";
import { ModelParams, ModelResponse } from "./models.types.js";
import { PricesResponse, PublishPriceRequest } from "./prices.types.js";

export const publishPrice = forward(opsWrite("managed-ai"), "post /ops/ai/models/:alias/prices", {
  summary: "Publish a new immutable price version of a model; it applies to new requests.",
  params: ModelParams,
  body: PublishPriceRequest,
  responses: { 201: ["the model with its new price", ModelResponse], 404: "no such model" },
  call: ({ deps, params, body }) => deps.services.managedAi.PublishPrice({ model_alias: params.alias, ...body }),
  answer: (model) => created(modelJson(model)),
});

export const listPrices = forward(opsRead("managed-ai"), "get /ops/ai/models/:alias/prices", {
  summary: "A model's price versions, newest first (latest 100).",
  params: ModelParams,
  responses: { 200: ["price versions", PricesResponse], 404: "no such model" },
  call: ({ deps, params }) => deps.services.managedAi.ListPrices({ model_alias: params.alias }),
  answer: ({ prices }) => ok(prices.map(priceJson)),
});
