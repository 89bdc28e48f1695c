import { z } from "zod";
import { usdAmount } from "@gateway/contract";
import { AppError } from "@gateway/errors";
import type { ManagedAiContext } from "../context.js";
import { meteredJsonCall, type InvokeInput, type InvokeResult } from "./invoke.js";
import { planCall, targetOf, type CallKind, type Plan } from "./plan.js";
import type { Usage } from "./settlement.js";
import { ID_PATTERN } from "@gateway/contract/ids";

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
    model: z
      .string()
      .regex(/^[\x21-\x7e]{1,256}$/, "model must be 1-256 printable ASCII characters")
      .optional(),
    max_cost: usdAmount().optional(),
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
  const items: (string | number[])[] =
    typeof input === "string"
      ? [input]
      : (input as (string | number | number[])[]).every((v) => typeof v === "number")
        ? [input as number[]]
        : (input as (string | number[])[]);
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

/** An embeddings request: its validated body, and the body as sent (for the parameters passed through). */
export type EmbeddingsRequest = { body: z.infer<typeof Body>; raw: Record<string, unknown> };

/**
 * Embeddings as the planner sees them: the body is checked before the instance
 * is looked up, a managed instance's model must be an alias, the worst case is
 * the input bound at the model's input price (no output), and a byok instance's
 * provider and key are resolved before the call is priced.
 */
const embeddings: CallKind<EmbeddingsRequest, EmbeddingsRequest> = {
  read(raw) {
    if (typeof raw !== "object" || raw === null || Array.isArray(raw)) throw new AppError("invalid_request", "The body must be a JSON object.");
    const parsed = Body.safeParse(raw);
    if (!parsed.success) {
      const param = parsed.error.issues[0]?.path[0];
      throw new AppError("invalid_request", describe(parsed.error), { extra: typeof param === "string" ? { param } : {} });
    }
    return { body: parsed.data, raw: raw as Record<string, unknown> };
  },
  demand(request, config) {
    const { body } = request;
    if (config.mode === "managed" && !ID_PATTERN.test(body.model ?? config.default_model)) {
      throw new AppError("invalid_request", "model must be a model alias", { extra: { param: "model" } });
    }
    return { request, model: body.model, inputTokensBound: embeddingInputBound(body.input), output: null, maxCostUsd: body.max_cost };
  },
  byokTargetFirst: true,
};

/** Plans an embeddings call (see `planCall`). */
export function planEmbeddings({
  ctx,
  input,
}: {
  ctx: ManagedAiContext;
  input: { tenantId: string; alias: string; body: Uint8Array };
}): Promise<Plan<EmbeddingsRequest>> {
  return planCall(ctx, input, embeddings);
}

/** The provider request: managed instances forward a few parameters, byok ones everything but `max_cost`. */
function embeddingsBody(plan: Plan<EmbeddingsRequest>): Record<string, unknown> {
  const { body, raw } = plan.request;
  const passthrough: Record<string, unknown> = {};
  if (plan.mode === "managed") {
    for (const name of MANAGED_PASSTHROUGH) if (raw[name] !== undefined) passthrough[name] = raw[name];
  } else {
    for (const [name, value] of Object.entries(raw)) if (name !== "max_cost" && name !== "model" && value !== undefined) passthrough[name] = value;
  }
  return { ...passthrough, input: body.input, model: plan.upstream.model };
}

/**
 * Embeddings through an ai-model instance, with the same planner and meter as
 * chat: managed instances reserve the worst case (the input bound at the model's
 * input price; no output), call the model's upstream and settle to the
 * reported usage; byok instances call the customer's provider with their key
 * and charge nothing (the estimate and cost come from `config.pricing`).
 * `max_cost` and `max_cost_per_request` are checked against the worst case (409).
 * A client that leaves does not stop a managed call: it settles on its usage.
 */
export async function invokeEmbeddings({ ctx, input }: { ctx: ManagedAiContext; input: InvokeInput }): Promise<InvokeResult> {
  const plan = await planEmbeddings({ ctx, input: input });
  // As chat: a client that leaves does not stop a metered call; the deadline does.
  return meteredJsonCall({
    ctx,
    input,
    plan,
    api: "embeddings",
    call: (signal) => ctx.provider.embeddings({ ...targetOf(plan), body: embeddingsBody(plan), signal }),
    usage: embeddingUsageOf,
    tokens: (usage) => usage.promptTokens,
  });
}
