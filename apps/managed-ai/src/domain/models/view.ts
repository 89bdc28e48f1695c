import type { Model, ModelWithPrice, PriceVersion } from "../rows.js";

/** A price version as the service answers it (who published it is in its event, not here). */
export type PriceView = Omit<PriceVersion, "createdBy">;

/** A model as the service answers it: its row's fields, copied, with its newest price version. */
export type ModelView = Model & {
  /** The newest price version, null while none was published. */
  price: PriceView | null;
};

export function priceView(row: PriceVersion): PriceView {
  return {
    id: row.id,
    modelAlias: row.modelAlias,
    version: row.version,
    inputUnitsPerMtok: row.inputUnitsPerMtok,
    outputUnitsPerMtok: row.outputUnitsPerMtok,
    createdAt: row.createdAt,
  };
}

/** A model with its newest price version (the first of `prices`, none while none was published). */
export function modelView(row: ModelWithPrice): ModelView {
  const latest = row.prices[0];
  return {
    alias: row.alias,
    upstreamId: row.upstreamId,
    upstreamModel: row.upstreamModel,
    enabled: row.enabled,
    maxOutputTokens: row.maxOutputTokens,
    maxTokensPerImage: row.maxTokensPerImage,
    version: row.version,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
    price: latest ? priceView(latest) : null,
  };
}

/** The audited state of a model. */
export function modelState(row: Model) {
  return {
    upstream_id: row.upstreamId,
    upstream_model: row.upstreamModel,
    enabled: row.enabled,
    max_output_tokens: row.maxOutputTokens,
    max_tokens_per_image: row.maxTokensPerImage,
    version: row.version,
  };
}

/** The audited state of a price version (units as decimal strings). */
export function priceState(price: PriceView) {
  return {
    price_id: price.id,
    version: price.version,
    input_units_per_mtok: price.inputUnitsPerMtok.toString(),
    output_units_per_mtok: price.outputUnitsPerMtok.toString(),
  };
}
