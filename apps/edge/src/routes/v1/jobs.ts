import type { jobs } from "@gateway/protos";
import { forward, ok } from "../forward.js";
import { listAnswer, pageArgs } from "../page.js";
import { JobListQuery, JobListResponse, JobParams, JobResponse } from "./jobs.types.js";

const JOBS = { tags: ["jobs"], access: { kind: "apiKey", scope: "jobs:read" } } as const;
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

export const getJobs = forward(JOBS, "get /v1/jobs", {
  summary: "The key's tenant's jobs, newest first: the newest 100, or a page at a time with `limit` and `cursor`.",
  query: JobListQuery,
  responses: { 200: ["jobs", JobListResponse] },
  call: ({ deps, query, tenantId }) => deps.services.jobs.ListJobs({ tenant_id: tenantId, ...pageArgs(query, 100) }),
  answer: (res, { query }) => listAnswer(res.jobs, jobView, res.next_cursor, query),
});

export const getJobById = forward(JOBS, "get /v1/jobs/:id", {
  summary: "One job of the key's tenant.",
  params: JobParams,
  responses: { 200: ["the job", JobResponse], 404: "no such job of this tenant" },
  call: ({ deps, params, tenantId }) => deps.services.jobs.GetJob({ tenant_id: tenantId, id: params.id }),
  answer: (job) => ok(jobView(job)),
});
