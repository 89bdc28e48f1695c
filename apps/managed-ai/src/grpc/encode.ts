import type { managedAi } from "@gateway/protos";
import type { CustomerModelView } from "../domain/customer-models/list.js";
import type { ModelView, PriceView } from "../domain/models/view.js";
import type { OfferView } from "../domain/offers/view.js";
import type { UpstreamView } from "../domain/upstreams/view.js";
import type { InstanceView } from "../domain/instances/view.js";
import type { BudgetView } from "../domain/budgets/budget.js";
import type { ConnectedAccountView } from "../domain/connected-accounts/view.js";
import type { UsageRecord } from "../domain/rows.js";

/** Domain views as proto messages: snake_case, int64 as decimal strings, ISO 8601 UTC times. */
export function encodePrice(p: PriceView): managedAi.PriceVersion {
  return {
    id: p.id,
    model_alias: p.modelAlias,
    version: p.version,
    input_units_per_mtok: p.inputUnitsPerMtok.toString(),
    output_units_per_mtok: p.outputUnitsPerMtok.toString(),
    created_at: p.createdAt.toISOString(),
  };
}

export function encodeModel(m: ModelView): managedAi.Model {
  return {
    alias: m.alias,
    upstream_id: m.upstreamId,
    upstream_model: m.upstreamModel,
    enabled: m.enabled,
    max_output_tokens: m.maxOutputTokens,
    ...(m.maxTokensPerImage !== null ? { max_tokens_per_image: m.maxTokensPerImage } : {}),
    version: m.version,
    created_at: m.createdAt.toISOString(),
    updated_at: m.updatedAt.toISOString(),
    ...(m.price ? { price: encodePrice(m.price) } : {}),
  };
}

export function encodeUpstream(u: UpstreamView): managedAi.Upstream {
  return {
    id: u.id,
    provider: u.provider,
    base_url: u.baseUrl,
    enabled: u.enabled,
    key_configured: u.keyConfigured,
    version: u.version,
    created_at: u.createdAt.toISOString(),
    updated_at: u.updatedAt.toISOString(),
  };
}

export function encodeOffer(o: OfferView): managedAi.Offer {
  return {
    id: o.id,
    tenant_id: o.tenantId,
    model_alias: o.modelAlias,
    discount_bps: o.discountBps,
    ...(o.expiresAt ? { expires_at: o.expiresAt.toISOString() } : {}),
    version: o.version,
    created_at: o.createdAt.toISOString(),
    updated_at: o.updatedAt.toISOString(),
  };
}

export function encodeCustomerModel(c: CustomerModelView): managedAi.CustomerModel {
  return {
    alias: c.alias,
    enabled: c.enabled,
    price_id: c.priceId,
    input_units_per_mtok: c.inputUnitsPerMtok.toString(),
    output_units_per_mtok: c.outputUnitsPerMtok.toString(),
    discount_bps: c.discountBps,
  };
}

export function encodeBudget(b: BudgetView): managedAi.BudgetState {
  return {
    limit_units: b.limit_units.toString(),
    spent_units: b.spent_units.toString(),
    reserved_units: b.reserved_units.toString(),
    period: b.period,
    resets_at: b.resets_at,
  };
}

export function encodeInstance(i: InstanceView): managedAi.Instance {
  const c = i.config;
  return {
    id: i.id,
    tenant_id: i.tenantId,
    service_id: i.serviceId,
    alias: i.alias,
    status: i.status,
    mode: c.mode,
    default_model: c.default_model,
    models: c.mode === "managed" ? (c.models ?? []) : [],
    ...(c.max_tokens_per_request !== undefined ? { max_tokens_per_request: c.max_tokens_per_request } : {}),
    ...(c.max_cost_per_request !== undefined ? { max_cost_per_request: c.max_cost_per_request } : {}),
    version: i.version,
    created_at: i.createdAt.toISOString(),
    updated_at: i.updatedAt.toISOString(),
    ...(i.budget ? { budget: encodeBudget(i.budget) } : {}),
    ...(c.mode === "byok"
      ? {
          provider: c.provider,
          base_url: c.base_url,
          api_key_configured: i.apiKeyConfigured,
          connected_account_id: i.connectedAccountId ?? "",
          ...(c.pricing ? { pricing: c.pricing } : {}),
        }
      : {}),
  };
}

export function encodeConnectedAccount(a: ConnectedAccountView): managedAi.ConnectedAccount {
  return { id: a.id, tenant_id: a.tenantId, provider: a.provider, name: a.name, created_at: a.createdAt.toISOString() };
}

export function encodeUsage(r: UsageRecord): managedAi.UsageRecord {
  return {
    id: r.id,
    tenant_id: r.tenantId,
    mode: r.mode,
    api_key_id: r.apiKeyId ?? "",
    service_alias: r.serviceAlias,
    model_alias: r.modelAlias,
    price_id: r.priceId,
    status: r.status,
    reserved_units: r.reservedUnits.toString(),
    ...(r.finalUnits !== null ? { final_units: r.finalUnits.toString() } : {}),
    ...(r.usageJson !== null ? { usage_json: r.usageJson } : {}),
    ...(r.errorCode !== null ? { error_code: r.errorCode } : {}),
    created_at: r.createdAt.toISOString(),
    hold_expires_at: r.holdExpiresAt.toISOString(),
    stream: r.stream,
    discount_bps: r.discountBps,
    ...(r.refundedUnits !== null ? { refunded_units: r.refundedUnits.toString() } : {}),
    ...(r.releaseReason !== null ? { release_reason: r.releaseReason } : {}),
    ...(r.releasedBy !== null ? { released_by: r.releasedBy } : {}),
    updated_at: r.updatedAt.toISOString(),
    ...(r.api !== null ? { api: r.api } : {}),
  };
}
