import { AppError } from "@gateway/errors";
import { CredentialError, openCredential, upstreamKeyContext } from "../../crypto/credentials.js";
import type { ManagedAiContext } from "../../db.js";
import { configOf } from "../instances/view.js";
import { effectiveDiscountBps } from "../offers/view.js";
import { parseChatRequest, type ChatRequest } from "./chat-request.js";
import { costUnits, type Price } from "./cost.js";
import { unitsToUsdNumber, usdToUnitsFloor } from "./money.js";
import { inputTokenUpperBound } from "./tokens.js";

/** Everything decided before money moves: what is called, at which price, for at most how much. */
export type Plan = {
  request: ChatRequest;
  tenantId: string;
  serviceAlias: string;
  modelAlias: string;
  upstream: { id: string; baseUrl: string; apiKey: string; model: string };
  priceId: string;
  price: Price;
  discountBps: number;
  inputTokensBound: bigint;
  outputTokensCap: number;
  reservedUnits: bigint;
};

const DEFAULT_MAX_OUTPUT_TOKENS = 4096;

function parseBody(body: Uint8Array): unknown {
  try {
    return JSON.parse(Buffer.from(body).toString("utf8"));
  } catch {
    throw new AppError("invalid_request", "The body is not valid JSON.");
  }
}

/**
 * Validates the body, resolves instance → model → upstream, the current price
 * version and the tenant's offer, fixes the output cap and prices the worst
 * case; refuses (409, with the cost) when it is above `max_cost` or the
 * instance's `max_cost_per_request`. Nothing is written.
 */
export async function planInvocation(ctx: ManagedAiContext, input: { tenantId: string; alias: string; body: Uint8Array }): Promise<Plan> {
  const request = parseChatRequest(parseBody(input.body));
  const instance = await ctx.catalog.instance(input.tenantId, input.alias);
  if (!instance) throw new AppError("not_found", `No ai-model instance ${input.alias}.`);
  if (instance.status !== "active") throw new AppError("forbidden", `The instance ${input.alias} is disabled.`);
  const config = configOf(instance);
  const modelAlias = request.model ?? config.default_model;
  if (config.models && config.models.length > 0 && !config.models.includes(modelAlias)) {
    throw new AppError("invalid_request", `model ${modelAlias} is not served by this instance`, { extra: { param: "model" } });
  }
  const now = new Date();
  const model = await ctx.catalog.model(modelAlias, input.tenantId);
  if (!model || !model.enabled) throw new AppError("invalid_request", `model ${modelAlias} is not available`, { extra: { param: "model" } });
  const price = model.prices[0];
  if (!price) throw new AppError("unavailable", `model ${modelAlias} has no price yet; billing is not configured.`);
  const upstream = model.upstream;
  if (!upstream.enabled || !upstream.apiKeyCiphertext || !upstream.apiKeyKeyId) {
    throw new AppError("unavailable", `model ${modelAlias} has no usable provider right now.`);
  }
  let apiKey: string;
  try {
    apiKey = openCredential(ctx.keyring, { ciphertext: upstream.apiKeyCiphertext, keyId: upstream.apiKeyKeyId }, upstreamKeyContext(upstream.id));
  } catch (err) {
    if (!(err instanceof CredentialError)) throw err;
    ctx.logger.error({ upstream_id: upstream.id, key_id: upstream.apiKeyKeyId }, "provider credential cannot be opened with ENCRYPTION_KEYS");
    throw new AppError("unavailable", `model ${modelAlias} has no usable provider right now.`);
  }

  const modelCap = model.maxOutputTokens || DEFAULT_MAX_OUTPUT_TOKENS;
  const instanceCap = config.max_tokens_per_request;
  if (request.maxTokens !== undefined) {
    if (instanceCap !== undefined && request.maxTokens > instanceCap) {
      throw new AppError("invalid_request", `max_tokens ${request.maxTokens} is above the instance's max_tokens_per_request (${instanceCap})`, {
        extra: { param: "max_tokens" },
      });
    }
    if (request.maxTokens > modelCap) {
      throw new AppError("invalid_request", `max_tokens ${request.maxTokens} is above the model's max_output_tokens (${modelCap})`, { extra: { param: "max_tokens" } });
    }
  }
  const outputTokensCap = request.maxTokens ?? Math.min(instanceCap ?? modelCap, modelCap);

  const priceOf: Price = { inputUnitsPerMtok: price.inputUnitsPerMtok, outputUnitsPerMtok: price.outputUnitsPerMtok };
  const discountBps = effectiveDiscountBps(model.offers[0], now);
  const inputTokensBound = inputTokenUpperBound(request.boundable);
  const reservedUnits = costUnits(inputTokensBound, BigInt(outputTokensCap), priceOf, BigInt(discountBps));

  for (const [limit, name] of [
    [request.maxCostUsd, "max_cost"],
    [config.max_cost_per_request, "the instance's max_cost_per_request"],
  ] as const) {
    if (limit !== undefined && reservedUnits > usdToUnitsFloor(limit)) {
      throw new AppError("conflict", `The worst-case cost of this request is above ${name} (${limit} USD).`, {
        extra: { pricing: { cost: unitsToUsdNumber(reservedUnits) } },
      });
    }
  }
  return {
    request,
    tenantId: input.tenantId,
    serviceAlias: instance.alias,
    modelAlias,
    upstream: { id: upstream.id, baseUrl: upstream.baseUrl, apiKey, model: model.upstreamModel },
    priceId: price.id,
    price: priceOf,
    discountBps,
    inputTokensBound,
    outputTokensCap,
    reservedUnits,
  };
}

/** The provider request: the priced parameters plus the allowed pass-through ones. */
export function providerBody(plan: Plan, stream: boolean): Record<string, unknown> {
  return {
    ...plan.request.passthrough,
    model: plan.upstream.model,
    messages: plan.request.messages,
    max_tokens: plan.outputTokensCap,
    ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}),
  };
}
