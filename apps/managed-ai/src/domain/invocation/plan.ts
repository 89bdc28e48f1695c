import { AppError } from "@gateway/errors";
import { CredentialError, openCredential, upstreamKeyContext } from "../credentials.js";
import type { ManagedAiContext } from "../context.js";
import type { ServiceInstance } from "../rows.js";
import { configOf, type ByokConfig, type InstanceConfig, type ManagedConfig } from "../instances/view.js";
import { effectiveDiscountBps } from "../offers/view.js";
import { byokTarget, type ProviderTarget } from "./byok-target.js";
import { parseByokChatRequest } from "./byok-request.js";
import { parseChatRequest, type ChatRequest } from "./chat-request.js";
import { costUnits, type Price } from "./cost.js";
import { unitsToUsdNumber, usdToUnitsFloor } from "@gateway/contract/money";

/**
 * Everything decided before money moves: what is called, at which price, for
 * at most how much. `mode` says who pays: `managed` requests reserve
 * `reservedUnits` from the balance and settle; `byok` requests are paid by the
 * customer at their own provider, so `reservedUnits` is only the worst-case
 * estimate at the instance's `config.pricing` (0 without it) and nothing moves.
 * This is what metering needs of a plan, whatever the kind of call.
 */
export type Priced = {
  mode: "managed" | "byok";
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
  /** The output cap the provider gets; 0 for a call without output (embeddings). */
  outputTokensCap: number;
  reservedUnits: bigint;
};

/** A planned call: its price and bounds, and the request its provider body is built from (chat by default). */
export type Plan<Request = ChatRequest> = Priced & { request: Request };

const DEFAULT_MAX_OUTPUT_TOKENS = 4096;

function parseBody(body: Uint8Array): unknown {
  try {
    return JSON.parse(Buffer.from(body).toString("utf8"));
  } catch {
    throw new AppError("invalid_request", "The body is not valid JSON.");
  }
}

/** The tenant's active ai-model instance under `alias` (404 unknown, 403 disabled). */
async function activeInstance(ctx: ManagedAiContext, tenantId: string, alias: string): Promise<ServiceInstance> {
  const instance = await ctx.catalog.instance(tenantId, alias);
  if (!instance) throw new AppError("not_found", `No ai-model instance ${alias}.`);
  if (instance.status !== "active") throw new AppError("forbidden", `The instance ${alias} is disabled.`);
  return instance;
}

/** A managed model as a call needs it: upstream target with its opened key, newest price, the tenant's discount. */
async function managedModel(ctx: ManagedAiContext, tenantId: string, config: ManagedConfig, modelAlias: string) {
  if (config.models && config.models.length > 0 && !config.models.includes(modelAlias)) {
    throw new AppError("invalid_request", `model ${modelAlias} is not served by this instance`, { extra: { param: "model" } });
  }
  const model = await ctx.catalog.model(modelAlias, tenantId);
  if (!model?.enabled) throw new AppError("invalid_request", `model ${modelAlias} is not available`, { extra: { param: "model" } });
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
    maxTokensPerImage: model.maxTokensPerImage,
  };
}

/** A byok instance's estimate price: its `config.pricing`, or free. */
function byokPrice(config: ByokConfig): Price {
  return {
    inputUnitsPerMtok: BigInt(config.pricing?.input_units_per_mtok ?? "0"),
    outputUnitsPerMtok: BigInt(config.pricing?.output_units_per_mtok ?? "0"),
  };
}

/** 409 with `pricing.cost` when the worst case is above the request's `max_cost` or the instance's `max_cost_per_request`. */
function checkCeilings(worstCase: bigint, maxCostUsd: number | undefined, config: { max_cost_per_request?: number | undefined }): void {
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
 * What one kind of call (chat, embeddings) asks for, as the planner prices it.
 * `output` is the call's output: the `max_tokens` it asked for (if any) and the
 * choices it wants; null for a call without output (embeddings).
 */
export type Demand<Request> = {
  request: Request;
  /** The model the request names; absent: the instance's default. */
  model: string | undefined;
  /** Everything but image parts. */
  inputTokensBound: bigint;
  /** Image parts, each bounded by the model's max_tokens_per_image (managed; byok counts them in the bound). */
  imageParts?: number;
  output: { maxTokens: number | undefined; choices: number } | null;
  maxCostUsd: number | undefined;
};

/** How a kind of call reads its body; everything else about planning is the same for every kind. */
export type CallKind<Read, Request> = {
  /** Checks the JSON body before the instance is looked up (a 400 here comes before a 404). */
  read(raw: unknown): Read;
  /** The request on this instance (its schema may depend on the instance's mode). */
  demand(read: Read, config: InstanceConfig): Demand<Request>;
  /**
   * Resolve a byok instance's provider and key before pricing the call, so that
   * a 503 for an unusable key comes before a 400 or 409 (embeddings, as they
   * always did); otherwise after it (chat).
   */
  byokTargetFirst?: boolean;
  /** `false`: a count, not a call (count_tokens): no refusal over max_cost or max_cost_per_request. */
  ceilings?: false;
};

/**
 * The one planner of chat and embeddings: validates the body, resolves the
 * instance and, for a managed one, model → upstream, the current price version
 * and the tenant's offer; for a byok one, the customer's provider and key. Fixes
 * the output cap, prices the worst case and refuses (409, with the cost) when it
 * is above `max_cost` or the instance's `max_cost_per_request`. Nothing is written.
 */
export async function planCall<Read, Request>(
  ctx: ManagedAiContext,
  input: { tenantId: string; alias: string; body: Uint8Array },
  kind: CallKind<Read, Request>,
): Promise<Plan<Request>> {
  const read = kind.read(parseBody(input.body));
  const instance = await activeInstance(ctx, input.tenantId, input.alias);
  const config = configOf(instance);
  const demand = kind.demand(read, config);
  if (config.mode === "byok") return planByok(ctx, instance, config, demand, kind);
  const modelAlias = demand.model ?? config.default_model;
  const managed = await managedModel(ctx, input.tenantId, config, modelAlias);
  const outputTokensCap = outputCap(demand, config, managed.maxOutputTokens);
  const inputTokensBound = demand.inputTokensBound + imageTokens(demand.imageParts ?? 0, modelAlias, managed.maxTokensPerImage);
  const reservedUnits = costUnits(inputTokensBound, outputTokens(demand, outputTokensCap), managed.price, BigInt(managed.discountBps));
  if (kind.ceilings !== false) checkCeilings(reservedUnits, demand.maxCostUsd, config);
  return {
    mode: "managed",
    request: demand.request,
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

/** Image parts at the model's max_tokens_per_image each; a model without it refuses them (400, no provider call). */
function imageTokens(imageParts: number, modelAlias: string, perImage: number | null): bigint {
  if (imageParts === 0) return 0n;
  if (perImage === null) {
    throw new AppError("invalid_request", `model ${modelAlias} does not accept images: image parts need the model's max_tokens_per_image`, {
      extra: { param: "messages" },
    });
  }
  return BigInt(imageParts) * BigInt(perImage);
}

/**
 * A byok call: the output cap is the request's `max_tokens`, else the
 * instance's `max_tokens_per_request`, else 4096 (there is no model record
 * whose limit could apply; the provider enforces its own); a request above the
 * instance's cap is refused (400). The estimate counts every choice (`n`).
 */
async function planByok<Request>(
  ctx: ManagedAiContext,
  instance: ServiceInstance,
  config: ByokConfig,
  demand: Demand<Request>,
  kind: Pick<CallKind<unknown, Request>, "byokTargetFirst" | "ceilings">,
): Promise<Plan<Request>> {
  const first = kind.byokTargetFirst === true ? await byokTarget({ ctx, input: { instance } }) : null;
  const outputTokensCap = outputCap(demand, config, null);
  const price = byokPrice(config);
  const estimate = costUnits(demand.inputTokensBound, outputTokens(demand, outputTokensCap), price, 0n);
  if (kind.ceilings !== false) checkCeilings(estimate, demand.maxCostUsd, config);
  const target = first ?? (await byokTarget({ ctx, input: { instance } }));
  const model = demand.model ?? config.default_model;
  return {
    mode: "byok",
    request: demand.request,
    tenantId: instance.tenantId,
    serviceAlias: instance.alias,
    modelAlias: model,
    upstream: { ...target, id: instance.id, model },
    priceId: "",
    price,
    discountBps: 0,
    inputTokensBound: demand.inputTokensBound,
    outputTokensCap,
    reservedUnits: estimate,
  };
}

/**
 * The output cap: the request's `max_tokens` (400 above the instance's
 * `max_tokens_per_request` or the model's `max_output_tokens`), else the smaller
 * of the two caps (managed), else the instance's cap or 4096 (byok: `modelCap`
 * null). A call without output has none (0).
 */
function outputCap(demand: Demand<unknown>, config: InstanceConfig, modelCap: number | null): number {
  if (!demand.output) return 0;
  const { maxTokens } = demand.output;
  const instanceCap = config.max_tokens_per_request;
  if (maxTokens !== undefined) {
    checkInstanceCap(maxTokens, instanceCap);
    if (modelCap !== null && maxTokens > modelCap) {
      throw new AppError("invalid_request", `max_tokens ${maxTokens} is above the model's max_output_tokens (${modelCap})`, { extra: { param: "max_tokens" } });
    }
    return maxTokens;
  }
  return modelCap === null ? (instanceCap ?? DEFAULT_MAX_OUTPUT_TOKENS) : Math.min(instanceCap ?? modelCap, modelCap);
}

/** The output tokens the worst case counts: the cap for every choice. */
const outputTokens = (demand: Demand<unknown>, outputTokensCap: number) => BigInt(outputTokensCap) * BigInt(demand.output?.choices ?? 1);

function checkInstanceCap(maxTokens: number, instanceCap: number | undefined): void {
  if (instanceCap !== undefined && maxTokens > instanceCap) {
    throw new AppError("invalid_request", `max_tokens ${maxTokens} is above the instance's max_tokens_per_request (${instanceCap})`, {
      extra: { param: "max_tokens" },
    });
  }
}

/** A chat completion: its schema is the managed one (CONTRACT.md 6b) or the byok one (everything passes through). */
export const chat: CallKind<unknown, ChatRequest> = {
  read: (raw) => raw,
  demand(raw, config) {
    const request = config.mode === "byok" ? parseByokChatRequest(raw) : parseChatRequest(raw);
    return {
      request,
      model: request.model,
      inputTokensBound: request.inputTokens,
      imageParts: request.imageParts,
      output: { maxTokens: request.maxTokens, choices: request.choices ?? 1 },
      maxCostUsd: request.maxCostUsd,
    };
  },
};

/** Plans a chat completion (see `planCall`). */
export function planInvocation({ ctx, input }: { ctx: ManagedAiContext; input: { tenantId: string; alias: string; body: Uint8Array } }): Promise<Plan> {
  return planCall(ctx, input, chat);
}

/** The provider request: the priced parameters plus the allowed pass-through ones. */
export function providerBody(plan: Plan, stream: boolean): Record<string, unknown> {
  return {
    ...plan.request.passthrough,
    model: plan.upstream.model,
    messages: plan.request.messages,
    [plan.request.maxTokensParam ?? "max_tokens"]: plan.outputTokensCap,
    ...(stream ? { stream: true, stream_options: { ...plan.request.streamOptions, include_usage: true } } : {}),
  };
}

/** What a provider call of a plan needs. */
export function targetOf(plan: { upstream: ProviderTarget }): ProviderTarget {
  return { baseUrl: plan.upstream.baseUrl, apiKey: plan.upstream.apiKey, egress: plan.upstream.egress };
}
