import type { Implementation } from "@gateway/grpc-kit";
import type { jobs, jobsV1 } from "@gateway/protos";
import type { JobsContext } from "../db.js";
import type { Job } from "../generated/prisma/client.js";
import { listAuditEvents } from "../domain/audit/list.js";
import { getJob, listJobs } from "../domain/jobs/read.js";
import { createLease } from "../domain/leases/create.js";
import { getLease, listLeases, type LeaseWithJob } from "../domain/leases/read.js";
import { createQuote } from "../domain/quotes/create.js";

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

function toLease({ lease, job }: LeaseWithJob): jobs.Lease {
  return {
    id: lease.id,
    job_id: lease.jobId,
    tenant_id: lease.tenantId,
    status: job.status,
    receiver: lease.receiver,
    energy: lease.energy,
    duration_seconds: lease.durationSeconds,
    cost_units: lease.costUnits.toString(),
    dry_run: lease.dryRun,
    provider_order_id: lease.providerOrderId ?? "",
    quote_id: lease.quoteId,
    created_at: lease.createdAt.toISOString(),
    updated_at: (job.updatedAt > lease.updatedAt ? job.updatedAt : lease.updatedAt).toISOString(),
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
    async CreateQuote(req) {
      const q = await createQuote({ ctx, input: req });
      return {
        quote_id: q.id,
        receiver: q.receiver,
        energy: q.energy,
        duration_seconds: q.durationSeconds,
        cost_units: q.costUnits.toString(),
        expires_at: q.expiresAt.toISOString(),
        provider: q.provider,
        provider_period: q.providerPeriod?.name ?? "",
        provider_period_seconds: q.providerPeriod?.seconds ?? 0,
      };
    },
    async CreateLease(req) {
      const r = await createLease({ ctx, input: req });
      return { job_id: r.jobId, lease_id: r.leaseId, status: "pending", dry_run: r.dryRun };
    },
    async ListLeases(req) {
      return { leases: (await listLeases({ ctx, input: req })).map(toLease) };
    },
    async GetLease(req) {
      return toLease(await getLease({ ctx, input: req }));
    },
  };
}
