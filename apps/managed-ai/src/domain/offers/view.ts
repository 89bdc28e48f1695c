import type { Offer } from "../rows.js";

/** An offer as the service answers it: every field of its row, copied (nothing else a read brought along). */
export type OfferView = Offer;

export function offerView(row: Offer): OfferView {
  return {
    id: row.id,
    tenantId: row.tenantId,
    modelAlias: row.modelAlias,
    discountBps: row.discountBps,
    expiresAt: row.expiresAt,
    version: row.version,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}

/** The audited state of an offer. */
export function offerState(row: Offer) {
  return { discount_bps: row.discountBps, expires_at: row.expiresAt?.toISOString() ?? null, version: row.version };
}

/** The discount an offer gives at `now`: its basis points until it expires, then 0. */
export function effectiveDiscountBps(offer: Pick<Offer, "discountBps" | "expiresAt"> | undefined, now: Date): number {
  if (!offer) return 0;
  return offer.expiresAt === null || offer.expiresAt.getTime() > now.getTime() ? offer.discountBps : 0;
}
