import type { EdgeDeps } from "../../../deps.js";
import { defineRoute } from "../../../http/route.js";
import { ModelParams, ModelResponse, PutModelRequest } from "./ai.types.js";
import { modelJson } from "./encode.js";

export const putModel = defineRoute<EdgeDeps, ModelParams, Record<string, never>, PutModelRequest>({
  method: "put",
  path: "/ops/ai/models/:alias",
  summary: "Create or update the model served under an alias.",
  tags: ["ops", "managed-ai"],
  access: { kind: "platform", level: "write" },
  params: ModelParams,
  body: PutModelRequest,
  responses: {
    200: { description: "the model as written", schema: ModelResponse },
    404: { description: "upstream_id names no upstream" },
    409: { description: "version is not the current one (or not 0/absent on create)" },
  },
  async handler({ deps, params, body }) {
    // null (no per-image limit) travels as 0: proto3 has no null.
    const { max_tokens_per_image: perImage, ...rest } = body;
    const request = { alias: params.alias, ...rest, ...(perImage !== undefined ? { max_tokens_per_image: perImage ?? 0 } : {}) };
    return { status: 200, body: { data: modelJson(await deps.services.managedAi.PutModel(request)) } };
  },
});
