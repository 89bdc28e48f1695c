import type { EdgeDeps } from "../../../deps.js";
import { defineRoute } from "../../../http/route.js";
import { UpstreamsResponse } from "./ai.types.js";
import { upstreamJson } from "./encode.js";

export const listUpstreams = defineRoute<EdgeDeps>({
  method: "get",
  path: "/ops/ai/upstreams",
  summary: "Upstream providers, newest first (latest 200), without credentials.",
  tags: ["ops", "managed-ai"],
  access: { kind: "platform", level: "read" },
  responses: { 200: { description: "upstreams", schema: UpstreamsResponse } },
  async handler({ deps }) {
    const { upstreams } = await deps.services.managedAi.ListUpstreams({});
    return { status: 200, body: { data: upstreams.map(upstreamJson) } };
  },
});
