import { z } from "zod";
import type { EdgeDeps } from "../../deps.js";
import { getRequestView } from "../../domain/requests/request-view.js";
import { sessionPrincipal } from "../../http/access.js";
import { defineRoute } from "../../http/route.js";
import { Id } from "@gateway/contract";
import { usageJson } from "../ops/ai/requests.js";
import { UsageRecord } from "../ops/ai/requests.types.js";

const RequestParams = z.object({ request_id: Id });
type RequestParams = z.infer<typeof RequestParams>;

export const RequestViewResponse = z.object({
  data: z.object({
    request_id: z.string(),
    key: z.object({ id: z.string(), name: z.string(), prefix: z.string() }).nullable(),
    usage: UsageRecord.nullable(),
    audit: z.array(z.object({ event_id: z.string(), type: z.string(), source: z.string(), occurred_at: z.string(), data: z.record(z.string(), z.unknown()) })),
  }),
});

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
