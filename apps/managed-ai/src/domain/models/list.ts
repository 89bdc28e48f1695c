import { z } from "zod";
import { parseInput } from "@gateway/errors";
import type { ManagedAiContext } from "../context.js";
import { ListLimit } from "../schemas.js";
import { modelView, type ModelView } from "./view.js";

export const ListModelsInput = z.object({ limit: ListLimit(200) });
export type ListModelsInput = z.input<typeof ListModelsInput>;

/** Newest first, at most 200 (spec section 8), each with its newest price version. */
export async function listModels({ ctx, input }: { ctx: ManagedAiContext; input: ListModelsInput }): Promise<ModelView[]> {
  const { limit } = parseInput(ListModelsInput, input);
  return (await ctx.store.models.list(limit)).map(modelView);
}
