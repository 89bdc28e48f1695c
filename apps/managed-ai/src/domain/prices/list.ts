import { z } from "zod";
import { AppError, parseInput } from "@gateway/errors";
import type { ManagedAiContext } from "../context.js";
import { ListLimit, ResourceId } from "../schemas.js";
import { priceView, type PriceView } from "../models/view.js";

export const ListPricesInput = z.object({ model_alias: ResourceId, limit: ListLimit(100) });
export type ListPricesInput = z.input<typeof ListPricesInput>;

/** A model's price versions, newest first, at most 100 (spec section 8). */
export async function listPrices({ ctx, input }: { ctx: ManagedAiContext; input: ListPricesInput }): Promise<PriceView[]> {
  const { model_alias, limit } = parseInput(ListPricesInput, input);
  if (!(await ctx.store.models.exists(model_alias))) throw new AppError("not_found", `No model ${model_alias}.`);
  return (await ctx.store.prices.list(model_alias, limit)).map(priceView);
}
