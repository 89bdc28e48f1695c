import type { EdgeDeps } from "../../../deps.js";
import { defineRoute } from "../../../http/route.js";
import { PutUpstreamRequest, PutUpstreamResponse, UpstreamParams } from "./ai.types.js";

export const putUpstream = defineRoute<EdgeDeps, UpstreamParams, Record<string, never>, PutUpstreamRequest>({
  method: "put",
  path: "/ops/ai/upstreams/:id",
  summary: "Create or update an upstream provider, or rotate its API key (sent keys are stored encrypted and never returned).",
  tags: ["ops", "managed-ai"],
  access: { kind: "platform", level: "write" },
  params: UpstreamParams,
  body: PutUpstreamRequest,
  responses: {
    200: { description: "written; version counts the writes", schema: PutUpstreamResponse },
    409: { description: "version is not the current one (or not 0/absent on create)" },
  },
  async handler({ deps, params, body }) {
    const result = await deps.services.managedAi.PutUpstream({ id: params.id, ...body });
    return { status: 200, body: { data: { id: result.id, version: result.version, key_configured: result.key_configured } } };
  },
});
