import type { jobs } from "@gateway/protos";
import type { EdgeDeps } from "../../../deps.js";
import { keyPrincipal } from "../../../http/access.js";
import { defineRoute } from "../../../http/route.js";
import { type IdempotencyKeyHeader, unitsToNumber } from "@gateway/contract";
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

export const postTronQuote = defineRoute<EdgeDeps, Record<string, never>, Record<string, never>, QuoteRequest>({
  method: "post",
  path: "/v1/apps/tron/quote",
  summary: "Prices an energy lease; the quote can be used until expires_at.",
  tags: ["tron"],
  access: { kind: "apiKey", scope: "tron:lease" },
  body: QuoteRequest,
  responses: { 200: { description: "the quote", schema: QuoteResponse }, 400: { description: "receiver, energy or duration_seconds out of bounds" } },
  async handler({ deps, body, principal }) {
    const q = await deps.services.jobs.CreateQuote({
      tenant_id: keyPrincipal(principal).tenantId,
      receiver: body.receiver,
      energy: body.energy,
      duration_seconds: body.duration_seconds,
    });
    return {
      status: 200,
      body: {
        data: {
          quote_id: q.quote_id,
          receiver: q.receiver,
          energy: unitsToNumber(q.energy),
          duration_seconds: unitsToNumber(q.duration_seconds),
          cost: usd(q.cost_units),
          cost_units: unitsToNumber(q.cost_units),
          expires_at: q.expires_at,
          provider: q.provider,
          provider_period: q.provider_period ? { name: q.provider_period, seconds: unitsToNumber(q.provider_period_seconds) } : null,
        },
      },
    };
  },
});

export const postTronLease = defineRoute<EdgeDeps, Record<string, never>, Record<string, never>, LeaseRequest, IdempotencyKeyHeader>({
  method: "post",
  path: "/v1/apps/tron/lease",
  summary: "Creates an energy lease from a quote, as an asynchronous job (202).",
  tags: ["tron"],
  access: { kind: "apiKey", scope: "tron:lease" },
  body: LeaseRequest,
  headers: LeaseHeaders,
  responses: {
    202: { description: "accepted; follow the job", schema: LeaseAccepted },
    400: { description: "bounds, callback_url not HTTPS, callback_secret missing or not 16-256 characters" },
    402: { description: "live mode: the balance does not cover the quote's cost" },
    409: {
      description: "unknown or expired quote, parameters differing from it, cost above max_cost (pricing.cost), Idempotency-Key reused with other parameters",
    },
  },
  async handler({ deps, body, headers, principal }) {
    const r = await deps.services.jobs.CreateLease({
      tenant_id: keyPrincipal(principal).tenantId,
      quote_id: body.quote_id,
      max_cost_units: usdToUnitsFloor(body.max_cost).toString(),
      receiver: body.receiver,
      energy: body.energy,
      duration_seconds: body.duration_seconds,
      callback_url: body.callback_url ?? "",
      callback_secret: body.callback_secret ?? "",
      idempotency_key: headers["Idempotency-Key"] ?? "",
    });
    return { status: 202, body: { data: { job_id: r.job_id, lease_id: r.lease_id, status: "pending", dry_run: r.dry_run } } };
  },
});

export const getTronLeases = defineRoute<EdgeDeps, Record<string, never>, LeaseListQuery>({
  method: "get",
  path: "/v1/apps/tron/leases",
  summary: "The key's tenant's energy leases, newest first: the newest 100, or a page at a time with `limit` and `cursor`.",
  tags: ["tron"],
  access: { kind: "apiKey", scope: "tron:lease" },
  query: LeaseListQuery,
  responses: { 200: { description: "leases", schema: LeaseListResponse } },
  async handler({ deps, query, principal }) {
    const res = await deps.services.jobs.ListLeases({ tenant_id: keyPrincipal(principal).tenantId, ...pageArgs(query, 100) });
    return listAnswer(res.leases, leaseView, res.next_cursor, query);
  },
});

export const getTronLease = defineRoute<EdgeDeps, LeaseParams>({
  method: "get",
  path: "/v1/apps/tron/leases/:id",
  summary: "One energy lease of the key's tenant.",
  tags: ["tron"],
  access: { kind: "apiKey", scope: "tron:lease" },
  params: LeaseParams,
  responses: { 200: { description: "the lease", schema: LeaseResponse }, 404: { description: "no such lease of this tenant" } },
  async handler({ deps, params, principal }) {
    return { status: 200, body: { data: leaseView(await deps.services.jobs.GetLease({ tenant_id: keyPrincipal(principal).tenantId, id: params.id })) } };
  },
});
