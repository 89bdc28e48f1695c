import { z } from "zod";
import { AppError, parseInput } from "@gateway/errors";
import { newId } from "@gateway/contract/ids";
import type { JobsContext } from "../context.js";
import type { TronQuote } from "../../generated/prisma/client.js";
import { leaseCostUnits } from "../../tron/pricing.js";
import type { ProviderPeriod } from "../../tron/provider.js";
import { Duration, Energy, Receiver, TenantId } from "./schemas.js";

export const CreateQuoteInput = z.object({ tenant_id: TenantId, receiver: Receiver, energy: Energy, duration_seconds: Duration });
export type CreateQuoteInput = z.input<typeof CreateQuoteInput>;

export type Quote = TronQuote & { provider: string; providerPeriod: ProviderPeriod | null };

/**
 * Prices a lease (docs/decisions/0101) and keeps the offer for
 * TRON_QUOTE_TTL_SECONDS. It also says which of the provider's periods the
 * lease will be ordered for (itrx sells 1H, 1D..30D: the smallest that covers
 * the duration, docs/decisions/0105). In live mode, energy below the provider's
 * reported minimum order is refused here (400 `invalid_request`, CONTRACT.md 1's code for a
 * bound), before anything is held, instead of being ordered and refused (decision 0245).
 */
export async function createQuote({ ctx, input }: { ctx: Pick<JobsContext, "prisma" | "tron" | "provider">; input: CreateQuoteInput }): Promise<Quote> {
  const q = parseInput(CreateQuoteInput, input);
  if (ctx.tron.mode === "live") {
    const minimum = await ctx.provider.minimumEnergy();
    if (minimum !== null && q.energy < minimum) {
      throw new AppError("invalid_request", `energy must be at least ${minimum}: the energy provider's minimum order.`, {
        extra: { minimum_energy: minimum },
      });
    }
  }
  const row = await ctx.prisma.tronQuote.create({
    data: {
      id: newId("quote"),
      tenantId: q.tenant_id,
      receiver: q.receiver,
      energy: q.energy,
      durationSeconds: q.duration_seconds,
      costUnits: leaseCostUnits(ctx.tron.pricing, q.energy, q.duration_seconds),
      expiresAt: new Date(Date.now() + ctx.tron.quoteTtlSeconds * 1000),
    },
  });
  return { ...row, provider: ctx.provider.name, providerPeriod: ctx.provider.period(q.duration_seconds) };
}
