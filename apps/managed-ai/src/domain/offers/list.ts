import { z } from "zod";
import { parseInput } from "@gateway/errors";
import type { ManagedAiContext } from "../context.js";
import { ListLimit, ResourceId } from "../schemas.js";
import { offerView, type OfferView } from "./view.js";

const Filter = z.union([z.literal(""), ResourceId]).optional();

export const ListOffersInput = z.object({ limit: ListLimit(200), tenant_id: Filter, model_alias: Filter });
export type ListOffersInput = z.input<typeof ListOffersInput>;

/** Customer offers, newest first, at most 200 (spec section 8); optionally of one tenant and/or model. */
export async function listOffers({ ctx, input }: { ctx: ManagedAiContext; input: ListOffersInput }): Promise<OfferView[]> {
  const { limit, tenant_id, model_alias } = parseInput(ListOffersInput, input);
  return (await ctx.store.offers.list({ tenantId: tenant_id || null, modelAlias: model_alias || null, limit })).map(offerView);
}
