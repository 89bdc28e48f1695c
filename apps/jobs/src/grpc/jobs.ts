import type { Implementation } from "@gateway/grpc-kit";
import type { jobs, jobsV1 } from "@gateway/protos";
import type { JobsContext } from "../domain/context.js";
import type { AccountWebhook, AccountWebhookDelivery, Job } from "../generated/prisma/client.js";
import { createAccountWebhook } from "../domain/account-webhooks/create.js";
import { deleteAccountWebhook, listAccountWebhookDeliveries, listAccountWebhooks, testAccountWebhook } from "../domain/account-webhooks/manage.js";
import { getAccountAlerts, putAccountAlerts, type AccountAlertsView } from "../domain/alerts/settings.js";
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

function toWebhook(w: AccountWebhook): jobs.AccountWebhook {
  return { id: w.id, url: w.url, events: w.events, description: w.description ?? "", created_at: w.createdAt.toISOString() };
}

function toDelivery(d: AccountWebhookDelivery): jobs.AccountWebhookDelivery {
  return {
    event_id: d.eventId,
    event: d.event,
    status: d.state,
    attempts: d.attempts,
    ...(d.lastStatus !== null ? { last_status: d.lastStatus } : {}),
    created_at: d.createdAt.toISOString(),
  };
}

const toAlerts = (a: AccountAlertsView): jobs.AccountAlerts => (a.balanceLowUnits === null ? {} : { balance_low_units: a.balanceLowUnits.toString() });

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
      const page = await listJobs({ ctx, input: req });
      return { jobs: page.items.map(toJob), next_cursor: page.nextCursor };
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
      const page = await listLeases({ ctx, input: req });
      return { leases: page.items.map(toLease), next_cursor: page.nextCursor };
    },
    async GetLease(req) {
      return toLease(await getLease({ ctx, input: req }));
    },
    async CreateAccountWebhook(req, call) {
      const { webhook, secret } = await createAccountWebhook({ ctx, input: { ...req, actor: call.actor ?? "" } });
      return { webhook: toWebhook(webhook), secret };
    },
    async ListAccountWebhooks(req) {
      const page = await listAccountWebhooks({ ctx, input: req });
      return { webhooks: page.items.map(toWebhook), next_cursor: page.nextCursor };
    },
    async DeleteAccountWebhook(req, call) {
      await deleteAccountWebhook({ ctx, input: { ...req, actor: call.actor ?? "" } });
      return {};
    },
    async TestAccountWebhook(req, call) {
      return { event_id: await testAccountWebhook({ ctx, input: { ...req, actor: call.actor ?? "" } }) };
    },
    async ListAccountWebhookDeliveries(req) {
      const page = await listAccountWebhookDeliveries({ ctx, input: req });
      return { deliveries: page.items.map(toDelivery), next_cursor: page.nextCursor };
    },
    async GetAccountAlerts(req) {
      return toAlerts(await getAccountAlerts({ ctx, input: req }));
    },
    async PutAccountAlerts(req, call) {
      const units = req.balance_low_units;
      return toAlerts(
        await putAccountAlerts({
          ctx,
          input: { tenant_id: req.tenant_id, balance_low_units: units === undefined || units === null ? null : units, actor: call.actor ?? "" },
        }),
      );
    },
  };
}
