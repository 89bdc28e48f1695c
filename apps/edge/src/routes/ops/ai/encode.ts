import type { managedAi } from "@gateway/protos";
import { unitsToNumber } from "@gateway/contract";

/** managed-ai messages as the contract's JSON (units as safe integers, nulls for absent values). */
export function priceJson(p: managedAi.PriceVersion__Output) {
  return {
    id: p.id,
    model_alias: p.model_alias,
    version: p.version,
    input_units_per_mtok: unitsToNumber(p.input_units_per_mtok),
    output_units_per_mtok: unitsToNumber(p.output_units_per_mtok),
    created_at: p.created_at,
  };
}

export function modelJson(m: managedAi.Model__Output) {
  return {
    alias: m.alias,
    upstream_id: m.upstream_id,
    upstream_model: m.upstream_model,
    enabled: m.enabled,
    max_output_tokens: m.max_output_tokens,
    max_tokens_per_image: m.max_tokens_per_image ?? null,
    version: m.version,
    price: m.price ? priceJson(m.price) : null,
    created_at: m.created_at,
    updated_at: m.updated_at,
  };
}

export function upstreamJson(u: managedAi.Upstream__Output) {
  return {
    id: u.id,
    provider: u.provider,
    base_url: u.base_url,
    enabled: u.enabled,
    key_configured: u.key_configured,
    version: u.version,
    created_at: u.created_at,
    updated_at: u.updated_at,
  };
}

export function offerJson(o: managedAi.Offer__Output) {
  return {
    id: o.id,
    tenant_id: o.tenant_id,
    model_alias: o.model_alias,
    discount_bps: o.discount_bps,
    expires_at: o.expires_at ?? null,
    version: o.version,
    created_at: o.created_at,
    updated_at: o.updated_at,
  };
}
