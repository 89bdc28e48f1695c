import { z } from "zod";
import type { EdgeDeps } from "../../deps.js";
import { defineRoute } from "../../http/route.js";

export const ProvidersResponse = z.object({ data: z.array(z.object({ id: z.string(), name: z.string() })) });

export const getSocialOpsProviders = defineRoute<EdgeDeps>({
  method: "get",
  path: "/v1/apps/socialops/providers",
  summary: "Inbound SocialOps providers this deployment understands (any valid key).",
  tags: ["socialops"],
  access: { kind: "apiKey" },
  responses: { 200: { description: "providers", schema: ProvidersResponse } },
  async handler({ deps }) {
    const res = await deps.services.messaging.ListSocialOpsProviders({});
    return { status: 200, body: { data: res.providers.map((p) => ({ id: p.id, name: p.name })) } };
  },
});
