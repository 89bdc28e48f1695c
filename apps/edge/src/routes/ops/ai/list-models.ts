import type { EdgeDeps } from "../../../deps.js";
import { defineRoute } from "../../../http/route.js";
import { ModelsResponse } from "./ai.types.js";
import { modelJson } from "./encode.js";

export const listModels = defineRoute<EdgeDeps>({
  method: "get",
  path: "/ops/ai/models",
  summary: "Models by alias, newest first (latest 200), each with its current price version.",
  tags: ["ops", "managed-ai"],
  access: { kind: "platform", level: "read" },
  responses: { 200: { description: "models", schema: ModelsResponse } },
  async handler({ deps }) {
    const { models } = await deps.services.managedAi.ListModels({});
    return { status: 200, body: { data: models.map(modelJson) } };
  },
});
