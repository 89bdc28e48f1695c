import { AppError } from "@gateway/errors";
import { CredentialError, openCredential, upstreamKeyContext } from "../../crypto/credentials.js";
import type { ManagedAiContext } from "../../db.js";
import type { ServiceInstance } from "../../generated/prisma/client.js";
import { configOf, type ByokConfig, type ManagedConfig } from "../instances/view.js";
import { effectiveDiscountBps } from "../offers/view.js";
import { byokTarget, type ProviderTarget } from "./byok-target.js";
import { parseByokChatRequest } from "./byok-request.js";
import { parseChatRequest, type ChatRequest } from "./chat-request.js";
import { costUnits, type Price } from "./cost.js";
import { unitsToUsdNumber, usdToUnitsFloor } from "@gateway/money";
import { inputTokenUpperBound } from "./tokens.js";

/**
 * Everything decided before money moves: what is called, at which price, for
 * at most how much. `mode` says who pays: `managed` requests reserve
 * `reservedUnits` from the balance and settle; `byok` requests are paid by the
 * customer at their own provider, so `reservedUnits` is only the worst-case
 * estimate at the instance's `config.pricing` (0 without it) and nothing moves.
 */
export type Plan = {
  mode: "managed" | "byok";
  request: ChatRequest;
  tenantId: string;
  serviceAlias: string;
  /** managed: the model alias; byok: the provider's model name. */
  modelAlias: string;
  upstream: ProviderTarget & { id: string; model: string };
  /** The applied price version; empty for byok. */
  priceId: string;
  price: Price;
  discountBps: number;
  inputTokensBound: bigint;
  outputTokensCap: number;
  reservedUnits: bigint;
};

export const DEFAULT_MAX_OUTPUT_TOKENS = 4096;

export function parseBody(body: Uint8Array): unknown {
  try {
    return JSON.parse(Buffer.from(body).toString("utf8"));
  } catch {
    throw new AppError("invalid_request", "The body is not valid JSON.");
  }
}

/** The tenant's active ai-model instance under `alias` (404 unknown, 403 disabled). */
export async function activeInstance(ctx: ManagedAiContext, tenantId: string, alias: string): Promise<ServiceInstance> {
  const instance = await ctx.catalog.instance(tenantId, alias);
  if (!instance) throw new AppError("not_found", `No ai-model instance ${alias}.`);
  if (instance.status !== "active") throw new AppError("forbidden", `The instance ${alias} is disabled.`);
  return instance;
}

/** A managed model as a call needs it: upstream target with its opened key, newest price, the tenant's discount. */
export async function managedModel(ctx: ManagedAiContext, tenantId: string, config: ManagedConfig, modelAlias: string) {
  if (config.models && config.models.length > 0 && !config.models.includes(modelAlias)) {
    throw new AppError("invalid_request", `model ${modelAlias} is not served by this instance`, { extra: { param: "model" } });
  }
  const model = await ctx.catalog.model(modelAlias, tenantId);
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
  return {
    upstream: { id: upstream.id, model: model.upstreamModel, baseUrl: upstream.baseUrl, apiKey, egress: "operator" as const },
    priceId: price.id,
    price: { inputUnitsPerMtok: price.inputUnitsPerMtok, outputUnitsPerMtok: price.outputUnitsPerMtok },
    discountBps: effectiveDiscountBps(model.offers[0], new Date()),
    maxOutputTokens: model.maxOutputTokens || DEFAULT_MAX_OUTPUT_TOKENS,
  };
}

/** A byok instance's estimate price: its `config.pricing`, or free. */
export function byokPrice(config: ByokConfig): Price {
  return {
    inputUnitsPerMtok: BigInt(config.pricing?.input_units_per_mtok ?? "0"),
    outputUnitsPerMtok: BigInt(config.pricing?.output_units_per_mtok ?? "0"),
  };
}

/** 409 with `pricing.cost` when the worst case is above the request's `max_cost` or the instance's `max_cost_per_request`. */
export function checkCeilings(worstCase: bigint, maxCostUsd: number | undefined, config: { max_cost_per_request?: number | undefined }): void {
  for (const [limit, name] of [
    [maxCostUsd, "max_cost"],
    [config.max_cost_per_request, "the instance's max_cost_per_request"],
  ] as const) {
    if (limit !== undefined && worstCase > usdToUnitsFloor(limit)) {
      throw new AppError("conflict", `The worst-case cost of this request is above ${name} (${limit} USD).`, {
        extra: { pricing: { cost: unitsToUsdNumber(worstCase) } },
      });
    }
  }
}

/**
 * Validates the body, resolves the instance and, for a managed one, model →
 * upstream, the current price version and the tenant's offer; for a byok one,
 * the customer's provider and key. Fixes the output cap, prices the worst case
 * and refuses (409, with the cost) when it is above `max_cost` or the
 * instance's `max_cost_per_request`. Nothing is written.
 */
export async function planInvocation(ctx: ManagedAiContext, input: { tenantId: string; alias: string; body: Uint8Array }): Promise<Plan> {
  const raw = parseBody(input.body);
  const instance = await activeInstance(ctx, input.tenantId, input.alias);
  const config = configOf(instance);
  if (config.mode === "byok") return planByok(ctx, instance, config, parseByokChatRequest(raw));
  const request = parseChatRequest(raw);
  const modelAlias = request.model ?? config.default_model;
  const managed = await managedModel(ctx, input.tenantId, config, modelAlias);

  const modelCap = managed.maxOutputTokens;
  const instanceCap = config.max_tokens_per_request;
  if (request.maxTokens !== undefined) {
    checkInstanceCap(request.maxTokens, instanceCap);
    if (request.maxTokens > modelCap) {
      throw new AppError("invalid_request", `max_tokens ${request.maxTokens} is above the model's max_output_tokens (${modelCap})`, { extra: { param: "max_tokens" } });
    }
  }
  const outputTokensCap = request.maxTokens ?? Math.min(instanceCap ?? modelCap, modelCap);
  const inputTokensBound = inputTokenUpperBound(request.boundable);
  const reservedUnits = costUnits(inputTokensBound, BigInt(outputTokensCap), managed.price, BigInt(managed.discountBps));
  checkCeilings(reservedUnits, request.maxCostUsd, config);
  return {
    mode: "managed",
    request,
    tenantId: input.tenantId,
    serviceAlias: instance.alias,
    modelAlias,
    upstream: managed.upstream,
    priceId: managed.priceId,
    price: managed.price,
    discountBps: managed.discountBps,
    inputTokensBound,
    outputTokensCap,
    reservedUnits,
  };
}

function checkInstanceCap(maxTokens: number, instanceCap: number | undefined): void {
  if (instanceCap !== undefined && maxTokens > instanceCap) {
    throw new AppError("invalid_request", `max_tokens ${maxTokens} is above the instance's max_tokens_per_request (${instanceCap})`, {
      extra: { param: "max_tokens" },
    });
  }
}

/**
 * A byok chat: the output cap is the request's `max_tokens`, else the
 * instance's `max_tokens_per_request`, else 4096 (there is no model record
 * whose limit could apply; the provider enforces its own); a request above the
 * instance's cap is refused (400). The estimate counts every choice (`n`).
 */
async function planByok(ctx: ManagedAiContext, instance: ServiceInstance, config: ByokConfig, request: ChatRequest): Promise<Plan> {
  if (request.maxTokens !== undefined) checkInstanceCap(request.maxTokens, config.max_tokens_per_request);
  const outputTokensCap = request.maxTokens ?? config.max_tokens_per_request ?? DEFAULT_MAX_OUTPUT_TOKENS;
  const price = byokPrice(config);
  const inputTokensBound = inputTokenUpperBound(request.boundable);
  const estimate = costUnits(inputTokensBound, BigInt(outputTokensCap) * BigInt(request.choices ?? 1), price, 0n);
  checkCeilings(estimate, request.maxCostUsd, config);
  const target = await byokTarget(ctx, instance);
  const model = request.model ?? config.default_model;
  return {
    mode: "byok",
    request,
    tenantId: instance.tenantId,
    serviceAlias: instance.alias,
    modelAlias: model,
    upstream: { ...target, id: instance.id, model },
    priceId: "",
    price,
    discountBps: 0,
    inputTokensBound,
    outputTokensCap,
    reservedUnits: estimate,
  };
}

/** What metering needs of a plan (chat or embeddings). */
export type Priced = Omit<Plan, "request">;

/** The provider request: the priced parameters plus the allowed pass-through ones. */
export function providerBody(plan: Plan, stream: boolean): Record<string, unknown> {
  return {
    ...plan.request.passthrough,
    model: plan.upstream.model,
    messages: plan.request.messages,
    [plan.request.maxTokensParam ?? "max_tokens"]: plan.outputTokensCap,
    ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}),
  };
}

/** What a provider call of a plan needs. */
export function targetOf(plan: { upstream: ProviderTarget }): ProviderTarget {
  return { baseUrl: plan.upstream.baseUrl, apiKey: plan.upstream.apiKey, egress: plan.upstream.egress };
}
