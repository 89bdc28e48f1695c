import type { EdgeDeps } from "../../deps.js";
import { getRequestView } from "../../domain/requests/request-view.js";
import { sessionPrincipal } from "../../http/access.js";
import { defineRoute } from "../../http/route.js";
import { usageJson } from "../ops/ai/requests.js";
import { RequestParams, RequestViewResponse } from "./requests.types.js";

export const getRequest = defineRoute<EdgeDeps, RequestParams>({
  method: "get",
  path: "/console/requests/:request_id",
  summary: "What the gateway recorded about one request (key, usage, audit), without prompts, answers or secrets.",
  tags: ["console"],
  access: { kind: "tenant", minRole: "admin", hideAs404: true },
  params: RequestParams,
  responses: { 200: { description: "the request", schema: RequestViewResponse }, 404: { description: "no such request of this tenant" } },
  async handler({ deps, params, principal }) {
    const data = await getRequestView({ ctx: deps, input: { requestId: params.request_id, tenantId: sessionPrincipal(principal).tenantId }, usageJson });
    return { status: 200, body: { data } };
  },
});
