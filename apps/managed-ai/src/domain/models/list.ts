import { z } from "zod";
import { parseInput } from "@gateway/errors";
import type { ManagedAiContext } from "../context.js";
import { ListLimit } from "../schemas.js";
import { modelView, WITH_LATEST_PRICE, type ModelView } from "./view.js";

export const ListModelsInput = z.object({ limit: ListLimit(200) });
export type ListModelsInput = z.input<typeof ListModelsInput>;

/** Newest first, at most 200 (spec section 8), each with its newest price version. */
export async function listModels({ ctx, input }: { ctx: ManagedAiContext; input: ListModelsInput }): Promise<ModelView[]> {
  const { limit } = parseInput(ListModelsInput, input);
  const rows = await ctx.prisma.model.findMany({ include: WITH_LATEST_PRICE, orderBy: [{ createdAt: "desc" }, { alias: "desc" }], take: limit });
  return rows.map(modelView);
}
