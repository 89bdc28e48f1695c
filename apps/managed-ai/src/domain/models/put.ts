import { z } from "zod";
import { AppError, parseInput } from "@gateway/errors";
import type { ManagedAiContext } from "../context.js";
import { Actor, assertVersion, concurrentWrite, ExpectedVersion, ResourceId } from "../schemas.js";
import { modelState, modelView, type ModelView } from "./view.js";

/** The provider's own model name, e.g. `gpt-4o-mini`, `meta-llama/Llama-3-8b`, `llama3:8b`. */
export const UpstreamModel = z.string().regex(/^[\x21-\x7e]{1,256}$/, "must be 1-256 printable ASCII characters without spaces");
export const MaxOutputTokens = z.number().int().min(1).max(1_000_000);
/** The most input tokens the provider counts for one image part; null: the model refuses image parts (CONTRACT.md 6b). */
export const MaxTokensPerImage = z.number().int().min(1).max(1_000_000).nullable();

export const PutModelInput = z.object({
  alias: ResourceId,
  upstream_id: ResourceId,
  upstream_model: UpstreamModel,
  enabled: z.boolean().optional(),
  max_output_tokens: MaxOutputTokens.optional(),
  /** Absent: unchanged (null on create). */
  max_tokens_per_image: MaxTokensPerImage.optional(),
  version: ExpectedVersion,
  actor: Actor,
});
export type PutModelInput = z.input<typeof PutModelInput>;

/** Default output cap of a new model (CONTRACT.md section 6). */
export const DEFAULT_MAX_OUTPUT_TOKENS = 4096;

/**
 * Creates or updates the model under an alias. Its upstream must exist (404
 * naming `upstream_id` otherwise). The row is locked while it is compared and
 * written, so of two writes naming the same version exactly one succeeds.
 * Prices are versioned separately (publishPrice) and do not change `version`.
 */
export async function putModel({ ctx, input }: { ctx: ManagedAiContext; input: PutModelInput }): Promise<ModelView> {
  const put = parseInput(PutModelInput, input);
  const what = `model ${put.alias}`;
  return ctx.writeCatalog(async (tx, emit) => {
    if (!(await ctx.store.upstreams.exists(tx, put.upstream_id))) throw new AppError("not_found", `upstream_id: no upstream ${put.upstream_id}.`);
    await ctx.store.locks.model(tx, put.alias);
    const before = await ctx.store.models.get(tx, put.alias);
    assertVersion(put.version, before?.version, what);

    const written = before
      ? await ctx.store.models.update(tx, put.alias, before.version, {
          upstreamId: put.upstream_id,
          upstreamModel: put.upstream_model,
          enabled: put.enabled ?? before.enabled,
          maxOutputTokens: put.max_output_tokens ?? before.maxOutputTokens,
          maxTokensPerImage: put.max_tokens_per_image === undefined ? before.maxTokensPerImage : put.max_tokens_per_image,
        })
      : await ctx.store.models.create(tx, put.alias, {
          upstreamId: put.upstream_id,
          upstreamModel: put.upstream_model,
          enabled: put.enabled ?? true,
          maxOutputTokens: put.max_output_tokens ?? DEFAULT_MAX_OUTPUT_TOKENS,
          maxTokensPerImage: put.max_tokens_per_image ?? null,
        });
    if (!written) throw concurrentWrite(what);

    const after = await ctx.store.models.withPrice(tx, put.alias);
    if (!after) throw new Error(`${what} is gone within the transaction that wrote it`);
    await emit("managed_ai.model_changed", {
      actor: put.actor,
      model_alias: put.alias,
      change: before ? "updated" : "created",
      before: before ? modelState(before) : null,
      after: modelState(after),
    });
    return modelView(after);
  });
}
