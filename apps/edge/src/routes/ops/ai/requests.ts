import type { managedAi } from "@gateway/protos";
import { forward, ok } from "../../forward.js";
import { opsRead, opsWrite } from "../ops-access.js";
import { unitsToNumber } from "@gateway/contract";
import { CaptureRequest, CaptureResponse, OperatorUsageListResponse, ReleaseRequest, ReleaseResponse, RequestParams } from "./requests.types.js";

/** A usage record as spec 2.1 shows it to its tenant. */
export function usageJson(r: managedAi.UsageRecord__Output) {
  return {
    id: r.id,
    mode: (r.mode || "managed") as "managed" | "byok",
    api_key_id: r.api_key_id || null,
    service_alias: r.service_alias,
    model_alias: r.model_alias,
    price_id: r.price_id,
    status: r.status,
    reserved_units: unitsToNumber(r.reserved_units),
    final_units: r.final_units !== undefined ? unitsToNumber(r.final_units) : null,
    usage_json: r.usage_json ?? null,
    error_code: r.error_code ?? null,
    api: (r.api ?? null) as "chat_completions" | "messages" | "embeddings" | null,
    created_at: r.created_at,
  };
}

export function operatorUsageJson(r: managedAi.UsageRecord__Output) {
  return {
    ...usageJson(r),
    tenant_id: r.tenant_id,
    stream: r.stream,
    discount_bps: r.discount_bps,
    hold_expires_at: r.hold_expires_at,
    refunded_units: r.refunded_units !== undefined ? unitsToNumber(r.refunded_units) : null,
    release_reason: r.release_reason ?? null,
    released_by: r.released_by ?? null,
    updated_at: r.updated_at,
  };
}

export const listRequests = forward(opsRead("ai"), "get /ops/ai/requests", {
  summary: "The latest 200 managed requests (settlements) of every tenant.",
  responses: { 200: ["requests, newest first", OperatorUsageListResponse] },
  call: ({ deps }) => deps.services.managedAi.ListUsage({ all_tenants: true, limit: 200, mode: "all" }),
  answer: (res) => ok(res.records.map(operatorUsageJson)),
});

export const releaseRequest = forward(opsWrite("ai"), "post /ops/ai/requests/:id/release", {
  summary: "Release a review request, or a reserved one past its hold's expiry: the hold is refunded and the request fails. Audited with the reason.",
  params: RequestParams,
  body: ReleaseRequest,
  responses: { 200: ["released", ReleaseResponse], 404: "no such request", 409: "not in review, or its hold has not expired" },
  call: ({ deps, params, body }) => deps.services.managedAi.ReleaseUsage({ id: params.id, reason: body.reason }),
  answer: (res) => ok({ id: res.id, status: "failed", refunded: unitsToNumber(res.refunded_units) }),
});

export const captureRequest = forward(opsWrite("ai"), "post /ops/ai/requests/:id/capture", {
  summary:
    "Capture a review request, or a reserved one past its hold's expiry: `units` (at most the reservation) are charged, the rest of the hold is refunded, and the request completes. Audited with the reason.",
  params: RequestParams,
  body: CaptureRequest,
  responses: {
    200: ["captured", CaptureResponse],
    404: "no such request",
    409: "not in review, or its hold has not expired, or the ledger already settled it otherwise",
    422: "units above the request's reservation",
  },
  call: ({ deps, params, body }) => deps.services.managedAi.CaptureUsage({ id: params.id, units: String(body.units), reason: body.reason }),
  answer: (res) => ok({ id: res.id, status: "completed", final_units: unitsToNumber(res.final_units), refunded: unitsToNumber(res.refunded_units) }),
});
