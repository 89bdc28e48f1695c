import type { EdgeDeps } from "../../../deps.js";
import { defineRoute } from "../../../http/route.js";
import { TestUpstreamResponse, UpstreamParams } from "./ai.types.js";

export const testUpstream = defineRoute<EdgeDeps, UpstreamParams>({
  method: "post",
  path: "/ops/ai/upstreams/:id/test",
  summary:
    "Check the provider connection: GET {base_url}/models with the stored key, no inference. A refused connection or a timeout is reported as unreachable.",
  tags: ["ops", "managed-ai"],
  // It uses the stored credential against a third party: platform_admin only.
  access: { kind: "platform", level: "write" },
  params: UpstreamParams,
  responses: {
    200: { description: "the provider's answer, or that none came", schema: TestUpstreamResponse },
    404: { description: "no such upstream" },
    503: { description: "the stored key cannot be decrypted with the configured keys, or managed-ai is unavailable" },
  },
  async handler({ deps, params }) {
    const result = await deps.services.managedAi.TestUpstream({ id: params.id });
    return {
      status: 200,
      body: { data: { reachable: result.reachable, authenticated: result.authenticated, upstream_status: result.upstream_status ?? null } },
    };
  },
});
