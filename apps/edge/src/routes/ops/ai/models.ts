import { forward, ok } from "../../forward.js";
import { opsRead, opsWrite } from "../ops-access.js";
import { modelJson } from "./encode.js";
import { ModelParams, ModelResponse, ModelsResponse, PutModelRequest } from "./models.types.js";

export const listModels = forward(opsRead("managed-ai"), "get /ops/ai/models", {
  summary: "Models by alias, newest first (latest 200), each with its current price version.",
  responses: { 200: ["models", ModelsResponse] },
  call: ({ deps }) => deps.services.managedAi.ListModels({}),
  answer: ({ models }) => ok(models.map(modelJson)),
});

export const putModel = forward(opsWrite("managed-ai"), "put /ops/ai/models/:alias", {
  summary: "Create or update the model served under an alias.",
  params: ModelParams,
  body: PutModelRequest,
  responses: {
    200: ["the model as written", ModelResponse],
    404: "upstream_id names no upstream",
    409: "version is not the current one (or not 0/absent on create)",
  },
  call: ({ deps, params, body }) => {
    // null (no per-image limit) travels as 0: proto3 has no null.
    const { max_tokens_per_image: perImage, ...rest } = body;
    return deps.services.managedAi.PutModel({ alias: params.alias, ...rest, ...(perImage !== undefined ? { max_tokens_per_image: perImage ?? 0 } : {}) });
  },
  answer: (model) => ok(modelJson(model)),
});
