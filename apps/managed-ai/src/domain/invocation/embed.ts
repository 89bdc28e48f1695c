import { z } from "zod";
import { AppError } from "@gateway/errors";
import type { ManagedAiContext } from "../../db.js";
import { configOf } from "../instances/view.js";
import type { InvokeInput, InvokeResult } from "./invoke.js";
import { costUnits } from "./cost.js";
import { openMeter } from "./meter.js";
import { activeInstance, byokPrice, checkCeilings, managedModel, parseBody, targetOf, type Priced } from "./plan.js";
import { byokTarget } from "./byok-target.js";
import { callFailure, providerSignal, USAGE_UNKNOWN_ABORTS } from "../../providers/provider-signal.js";
import type { Usage } from "./settlement.js";

const encoder = new TextEncoder();

/** `input` as OpenAI takes it: a string, strings, a token array, or token arrays. */
const Input = z.union([
  z.string(),
  z.array(z.string()).min(1),
  z.array(z.number().int().min(0)).min(1),
  z.array(z.array(z.number().int().min(0)).min(1)).min(1),
]);

const Body = z
  .object({
    input: Input,
    model: z.string().regex(/^[\x21-\x7e]{1,256}$/, "model must be 1-256 printable ASCII characters").optional(),
    max_cost: z.number().min(0).finite().optional(),
  })
  .loose();

/** Provider parameters a managed embedding forwards; a byok one forwards everything but `max_cost`. */
const MANAGED_PASSTHROUGH = ["encoding_format", "dimensions", "user"];

/**
 * Input tokens never below the provider's count: a string has at most one
 * token per UTF-8 byte (byte-level BPE, no chat framing in embeddings); a
 * token array is its length.
 */
export function embeddingInputBound(input: z.infer<typeof Input>): bigint {
  const items: (string | number[])[] = typeof input === "string" ? [input] : (input as (string | number | number[])[]).every((v) => typeof v === "number") ? [input as number[]] : (input as (string | number[])[]);
  return BigInt(items.reduce((n, item) => n + (typeof item === "string" ? encoder.encode(item).length : item.length), 0));
}

/** An embeddings answer's usage: input tokens only. */
export function embeddingUsageOf(value: unknown): Usage | null {
  if (!value || typeof value !== "object") return null;
  const u = value as Record<string, unknown>;
  if (typeof u.prompt_tokens !== "number" || !Number.isSafeInteger(u.prompt_tokens) || u.prompt_tokens < 0) return null;
  return { promptTokens: BigInt(u.prompt_tokens), completionTokens: 0n, raw: u };
}

function describe(error: z.ZodError): string {
  const issue = error.issues[0];
  const path = issue?.path.map(String).join(".");
  return issue ? (path ? `${path}: ${issue.message}` : issue.message) : "invalid request body";
}

/**
 * Embeddings through an ai-model instance, with the same meter as chat:
 * managed instances reserve the worst case (the input bound at the model's
 * input price; no output), call the model's upstream and settle to the
 * reported usage; byok instances call the customer's provider with their key
 * and charge nothing (the estimate and cost come from `config.pricing`).
 * `max_cost` and `max_cost_per_request` are checked against the worst case (409).
 * A client that leaves does not stop a managed call: it settles on its usage.
 */
export async function invokeEmbeddings({ ctx, input }: { ctx: ManagedAiContext; input: InvokeInput }): Promise<InvokeResult> {
  const raw = parseBody(input.body);
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) throw new AppError("invalid_request", "The body must be a JSON object.");
  const parsed = Body.safeParse(raw);
  if (!parsed.success) {
    const param = parsed.error.issues[0]?.path[0];
    throw new AppError("invalid_request", describe(parsed.error), { extra: typeof param === "string" ? { param } : {} });
  }
  const body = parsed.data;
  const instance = await activeInstance(ctx, input.tenantId, input.alias);
  const config = configOf(instance);
  const inputTokensBound = embeddingInputBound(body.input);
  const record = raw as Record<string, unknown>;
  const passthrough: Record<string, unknown> = {};

  let priced: Priced;
  if (config.mode === "managed") {
    const modelAlias = body.model ?? config.default_model;
    if (!/^[A-Za-z0-9_-]{1,128}$/.test(modelAlias)) throw new AppError("invalid_request", "model must be a model alias", { extra: { param: "model" } });
    const managed = await managedModel(ctx, input.tenantId, config, modelAlias);
    for (const name of MANAGED_PASSTHROUGH) if (record[name] !== undefined) passthrough[name] = record[name];
    priced = {
      mode: "managed",
      tenantId: input.tenantId,
      serviceAlias: instance.alias,
      modelAlias,
      upstream: managed.upstream,
      priceId: managed.priceId,
      price: managed.price,
      discountBps: managed.discountBps,
      inputTokensBound,
      outputTokensCap: 0,
      reservedUnits: costUnits(inputTokensBound, 0n, managed.price, BigInt(managed.discountBps)),
    };
  } else {
    for (const [name, value] of Object.entries(record)) if (name !== "max_cost" && name !== "model" && value !== undefined) passthrough[name] = value;
    const price = byokPrice(config);
    const model = body.model ?? config.default_model;
    priced = {
      mode: "byok",
      tenantId: input.tenantId,
      serviceAlias: instance.alias,
      modelAlias: model,
      upstream: { ...(await byokTarget(ctx, instance)), id: instance.id, model },
      priceId: "",
      price,
      discountBps: 0,
      inputTokensBound,
      outputTokensCap: 0,
      reservedUnits: costUnits(inputTokensBound, 0n, price, 0n),
    };
  }
  checkCeilings(priced.reservedUnits, body.max_cost, config);

  const meter = await openMeter(ctx, priced, { requestId: input.requestId, apiKeyId: input.apiKeyId, idempotencyKey: input.idempotencyKey, stream: false, keyBudget: input.keyBudget });
  // As chat: a client that leaves does not stop a metered call; the deadline does.
  const call = providerSignal(input);
  let answer: Record<string, unknown>;
  try {
    const res = await ctx.provider.embeddings({ ...targetOf(priced), body: { ...passthrough, input: body.input, model: priced.upstream.model }, signal: call.signal });
    answer = await ctx.provider.json(res.body, call.signal);
  } catch (err) {
    const failure = callFailure(ctx.provider, err, call);
    if (USAGE_UNKNOWN_ABORTS.has(failure.code)) await meter.review(failure.code);
    else await meter.failed(failure.code);
    throw failure.appError;
  } finally {
    call.dispose();
  }
  if (priced.mode === "managed") answer.model = priced.modelAlias;
  const usage = embeddingUsageOf(answer.usage);
  const result = { priceId: priced.priceId, reservedUnits: priced.reservedUnits, body: Buffer.from(JSON.stringify(answer)) };
  if (!usage) {
    await meter.review("usage_unavailable");
    return result;
  }
  const finalUnits = await meter.completed(usage);
  return { ...result, finalUnits, totalTokens: Number(usage.promptTokens) };
}
