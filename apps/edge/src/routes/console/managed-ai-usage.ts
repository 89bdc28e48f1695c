import { forward } from "../forward.js";
import { member } from "./console-access.js";
import { usageJson } from "../ops/ai/requests.js";
import { UsageListResponse } from "../ops/ai/requests.types.js";
import { listAnswer } from "../page.js";
import { UsageQuery } from "./managed-ai-usage.types.js";

export const listManagedAiUsage = forward(member("ai"), "get /console/services/managed-ai/usage", {
  summary:
    "The caller tenant's managed requests (`mode=byok`: bring-your-own-key ones, never charged; `mode=all`: both), newest first: the newest 100, or a page at a time with `limit` and `cursor`.",
  query: UsageQuery,
  responses: {
    200: ["usage records, newest first", UsageListResponse],
    400: "`before` is not a request of this tenant, or `cursor` is not one this list gave",
  },
  call: ({ deps, query, tenantId }) =>
    deps.services.managedAi.ListUsage({
      tenant_id: tenantId,
      limit: query.limit ?? 100,
      before: query.before ?? "",
      cursor: query.cursor ?? "",
      mode: query.mode ?? "managed",
    }),
  answer: (res, { query }) => listAnswer(res.records, usageJson, res.next_cursor, query),
});
