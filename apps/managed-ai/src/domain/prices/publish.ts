import { z } from "zod";
import { newId } from "@gateway/contract/ids";
import { AppError, parseInput } from "@gateway/errors";
import type { ManagedAiContext } from "../context.js";
import { Actor, NonNegativeUnits, ResourceId } from "../schemas.js";
import { modelView, priceState, priceView, type ModelView } from "../models/view.js";

export const PublishPriceInput = z.object({
  model_alias: ResourceId,
  input_units_per_mtok: NonNegativeUnits,
  output_units_per_mtok: NonNegativeUnits,
  actor: Actor,
});
export type PublishPriceInput = z.input<typeof PublishPriceInput>;

/**
 * Publishes the next price version of a model: 1, 2, 3 ... without gaps or
 * duplicates, because publishing locks the model row (concurrent publishers of
 * one model take turns; a unique (model_alias, version) index backs it up).
 * Price versions are never changed or deleted; the database refuses it.
 */
export async function publishPrice({ ctx, input }: { ctx: ManagedAiContext; input: PublishPriceInput }): Promise<ModelView> {
  const publish = parseInput(PublishPriceInput, input);
  return ctx.writeCatalog(async (tx, emit) => {
    if (!(await ctx.store.locks.model(tx, publish.model_alias))) throw new AppError("not_found", `No model ${publish.model_alias}.`);
    const previous = await ctx.store.prices.latest(tx, publish.model_alias);
    const price = await ctx.store.prices.create(tx, {
      id: newId("price"),
      modelAlias: publish.model_alias,
      version: (previous?.version ?? 0) + 1,
      inputUnitsPerMtok: publish.input_units_per_mtok,
      outputUnitsPerMtok: publish.output_units_per_mtok,
      createdBy: publish.actor,
    });
    await emit("managed_ai.price_published", {
      actor: publish.actor,
      model_alias: publish.model_alias,
      price: priceState(priceView(price)),
      previous: previous ? priceState(priceView(previous)) : null,
    });
    const model = await ctx.store.models.withPrice(tx, publish.model_alias);
    if (!model) throw new Error(`model ${publish.model_alias} is gone within the transaction that locked it`);
    return modelView(model);
  });
}
