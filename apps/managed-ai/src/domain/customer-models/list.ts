import { z } from "zod";
import { parseInput } from "@gateway/errors";
import type { ManagedAiContext } from "../context.js";
import { ResourceId } from "../schemas.js";
import { effectiveDiscountBps } from "../offers/view.js";

export const ListCustomerModelsInput = z.object({ tenant_id: ResourceId });
export type ListCustomerModelsInput = z.input<typeof ListCustomerModelsInput>;

export type CustomerModelView = {
  alias: string;
  enabled: boolean;
  priceId: string;
  inputUnitsPerMtok: bigint;
  outputUnitsPerMtok: bigint;
  /** The tenant's unexpired discount, 0 without one; list prices are not reduced by it. */
  discountBps: number;
};

/**
 * A tenant's effective prices: every model that has a published price (newest
 * first, at most 200), with its newest price version and the tenant's own offer.
 * Models without a price cannot be used and are not listed; disabled ones are,
 * with `enabled: false`.
 */
export async function listCustomerModels({ ctx, input }: { ctx: ManagedAiContext; input: ListCustomerModelsInput }): Promise<CustomerModelView[]> {
  const { tenant_id } = parseInput(ListCustomerModelsInput, input);
  const now = new Date();
  const rows = await ctx.store.models.priced(tenant_id);
  return rows.flatMap((row) => {
    const price = row.prices[0];
    if (!price) return [];
    return [
      {
        alias: row.alias,
        enabled: row.enabled,
        priceId: price.id,
        inputUnitsPerMtok: price.inputUnitsPerMtok,
        outputUnitsPerMtok: price.outputUnitsPerMtok,
        discountBps: effectiveDiscountBps(row.offers[0], now),
      },
    ];
  });
}
