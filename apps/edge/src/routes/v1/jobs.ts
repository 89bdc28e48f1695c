import type { jobs } from "@gateway/protos";
import type { EdgeDeps } from "../../deps.js";
import { keyPrincipal } from "../../http/access.js";
import { defineRoute } from "../../http/route.js";
import { listAnswer, pageArgs } from "../page.js";
import { JobListQuery, JobListResponse, JobParams, JobResponse } from "./jobs.types.js";

const parse = (text: string) => (text ? (JSON.parse(text) as unknown) : null);

function jobView(job: jobs.Job__Output) {
  return {
    id: job.id,
    type: job.type,
    status: job.status,
    result: parse(job.result_json),
    error: parse(job.error_json),
    callback: { state: job.callback?.state ?? "none", attempts: job.callback?.attempts ?? 0, last_status: job.callback?.last_status ?? null },
    created_at: job.created_at,
    updated_at: job.updated_at,
  };
}

export const getJobs = defineRoute<EdgeDeps, Record<string, never>, JobListQuery>({
  method: "get",
  path: "/v1/jobs",
  summary: "The key's tenant's jobs, newest first: the newest 100, or a page at a time with `limit` and `cursor`.",
  tags: ["jobs"],
  access: { kind: "apiKey", scope: "jobs:read" },
  query: JobListQuery,
  responses: { 200: { description: "jobs", schema: JobListResponse } },
  async handler({ deps, query, principal }) {
    const res = await deps.services.jobs.ListJobs({ tenant_id: keyPrincipal(principal).tenantId, ...pageArgs(query, 100) });
    return listAnswer(res.jobs, jobView, res.next_cursor, query);
  },
});

export const getJobById = defineRoute<EdgeDeps, JobParams>({
  method: "get",
  path: "/v1/jobs/:id",
  summary: "One job of the key's tenant.",
  tags: ["jobs"],
  access: { kind: "apiKey", scope: "jobs:read" },
  params: JobParams,
  responses: { 200: { description: "the job", schema: JobResponse }, 404: { description: "no such job of this tenant" } },
  async handler({ deps, params, principal }) {
    const job = await deps.services.jobs.GetJob({ tenant_id: keyPrincipal(principal).tenantId, id: params.id });
    return { status: 200, body: { data: jobView(job) } };
  },
});
