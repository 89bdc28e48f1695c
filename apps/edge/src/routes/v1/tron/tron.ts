import type { jobs } from "@gateway/protos";
import { accepted, forward, ok } from "../../forward.js";
import { unitsToNumber } from "@gateway/contract";
import { listAnswer, pageArgs } from "../../page.js";
import {
  LeaseAccepted,
  LeaseHeaders,
  LeaseListQuery,
  LeaseListResponse,
  LeaseParams,
  LeaseRequest,
  LeaseResponse,
  QuoteRequest,
  QuoteResponse,
} from "./tron.types.js";
import { unitsToUsdNumber, usdToUnitsFloor } from "@gateway/contract/money";

const usd = (units: string) => unitsToUsdNumber(units);
const LEASE = { tags: ["tron"], access: { kind: "apiKey", scope: "tron:lease" } } as const;

function leaseView(l: jobs.Lease__Output) {
  return {
    id: l.id,
    job_id: l.job_id,
    status: l.status,
    receiver: l.receiver,
    energy: unitsToNumber(l.energy),
    duration_seconds: unitsToNumber(l.duration_seconds),
    cost: usd(l.cost_units),
    cost_units: unitsToNumber(l.cost_units),
    dry_run: l.dry_run,
    provider_order_id: l.provider_order_id || null,
    quote_id: l.quote_id,
    created_at: l.created_at,
    updated_at: l.updated_at,
  };
}

export const postTronQuote = forward(LEASE, "post /v1/apps/tron/quote", {
  summary: "Prices an energy lease; the quote can be used until expires_at.",
  body: QuoteRequest,
  responses: { 200: ["the quote", QuoteResponse], 400: "receiver, energy or duration_seconds out of bounds" },
  call: ({ deps, body, tenantId }) =>
    deps.services.jobs.CreateQuote({ tenant_id: tenantId, receiver: body.receiver, energy: body.energy, duration_seconds: body.duration_seconds }),
  answer: (q) =>
    ok({
      quote_id: q.quote_id,
      receiver: q.receiver,
      energy: unitsToNumber(q.energy),
      duration_seconds: unitsToNumber(q.duration_seconds),
      cost: usd(q.cost_units),
      cost_units: unitsToNumber(q.cost_units),
      expires_at: q.expires_at,
      provider: q.provider,
      provider_period: q.provider_period ? { name: q.provider_period, seconds: unitsToNumber(q.provider_period_seconds) } : null,
    }),
});

export const postTronLease = forward(LEASE, "post /v1/apps/tron/lease", {
  summary: "Creates an energy lease from a quote, as an asynchronous job (202).",
  body: LeaseRequest,
  headers: LeaseHeaders,
  responses: {
    202: ["accepted; follow the job", LeaseAccepted],
    400: "bounds, callback_url not HTTPS, callback_secret missing or not 16-256 characters",
    402: "live mode: the balance does not cover the quote's cost",
    409: {
      description: "unknown or expired quote, parameters differing from it, cost above max_cost (pricing.cost), Idempotency-Key reused with other parameters",
    },
  },
  call: ({ deps, body, headers, tenantId }) =>
    deps.services.jobs.CreateLease({
      tenant_id: tenantId,
      quote_id: body.quote_id,
      max_cost_units: usdToUnitsFloor(body.max_cost).toString(),
      receiver: body.receiver,
      energy: body.energy,
      duration_seconds: body.duration_seconds,
      callback_url: body.callback_url ?? "",
      callback_secret: body.callback_secret ?? "",
      idempotency_key: headers["Idempotency-Key"] ?? "",
    }),
  answer: (r) => accepted({ job_id: r.job_id, lease_id: r.lease_id, status: "pending", dry_run: r.dry_run }),
});

export const getTronLeases = forward(LEASE, "get /v1/apps/tron/leases", {
  summary: "The key's tenant's energy leases, newest first: the newest 100, or a page at a time with `limit` and `cursor`.",
  query: LeaseListQuery,
  responses: { 200: ["leases", LeaseListResponse] },
  call: ({ deps, query, tenantId }) => deps.services.jobs.ListLeases({ tenant_id: tenantId, ...pageArgs(query, 100) }),
  answer: (res, { query }) => listAnswer(res.leases, leaseView, res.next_cursor, query),
});

export const getTronLease = forward(LEASE, "get /v1/apps/tron/leases/:id", {
  summary: "One energy lease of the key's tenant.",
  params: LeaseParams,
  responses: { 200: ["the lease", LeaseResponse], 404: "no such lease of this tenant" },
  call: ({ deps, params, tenantId }) => deps.services.jobs.GetLease({ tenant_id: tenantId, id: params.id }),
  answer: (lease) => ok(leaseView(lease)),
});
