import type { Implementation } from "@gateway/grpc-kit";
import type { jobs, jobsV1 } from "@gateway/protos";
import type { JobsContext } from "../db.js";
import type { Job } from "../generated/prisma/client.js";
import { listAuditEvents } from "../domain/audit/list.js";
import { getJob, listJobs } from "../domain/jobs/read.js";

const json = (value: unknown) => (value === null || value === undefined ? "" : JSON.stringify(value));

function toJob(j: Job): jobs.Job {
  return {
    id: j.id,
    tenant_id: j.tenantId,
    type: j.type,
    status: j.status,
    result_json: json(j.result),
    error_json: json(j.error),
    callback: { state: j.callbackState, attempts: j.callbackAttempts, ...(j.callbackLastStatus !== null ? { last_status: j.callbackLastStatus } : {}) },
    created_at: j.createdAt.toISOString(),
    updated_at: j.updatedAt.toISOString(),
  };
}

export function jobsHandlers(ctx: JobsContext): Implementation<typeof jobsV1> {
  return {
    async ListAuditEvents(req) {
      const events = await listAuditEvents({ ctx, input: req });
      return {
        events: events.map((e) => ({
          event_id: e.eventId,
          type: e.type,
          source: e.source,
          request_id: e.requestId ?? "",
          occurred_at: e.occurredAt.toISOString(),
          data_json: JSON.stringify(e.data),
          recorded_at: e.recordedAt.toISOString(),
        })),
      };
    },
    async ListJobs(req) {
      return { jobs: (await listJobs({ ctx, input: req })).map(toJob) };
    },
    async GetJob(req) {
      return toJob(await getJob({ ctx, input: req }));
    },
  };
}
