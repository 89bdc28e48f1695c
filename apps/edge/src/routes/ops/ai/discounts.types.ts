import { z } from "zod";
import { Id } from "@gateway/contract";
import { ExpectedVersion, Timestamp } from "./common.types.js";

/** Request and response schemas of /ops/ai/discounts (CONTRACT.md section 5): a tenant's offer on a model. */

export const PutDiscountRequest = z.strictObject({
  tenant_id: Id.describe("An existing tenant (404 otherwise)."),
  model_alias: Id.describe("An existing model (404 otherwise)."),
  discount_bps: z.number().int().min(0).max(10_000).describe("Basis points off the list price."),
  expires_at: z.iso.datetime().nullable().optional().describe("ISO 8601 UTC; null removes the expiry; absent keeps it (none on create)."),
  version: ExpectedVersion,
});
export type PutDiscountRequest = z.infer<typeof PutDiscountRequest>;

export const PutDiscountResponse = z.object({ data: z.object({ id: z.string(), version: z.number().int() }) });

export const DiscountsQuery = z.object({
  tenant_id: Id.optional().describe("Only this tenant's offers."),
  model_alias: Id.optional().describe("Only offers on this model."),
});
export type DiscountsQuery = z.infer<typeof DiscountsQuery>;

export const Offer = z.object({
  id: z.string(),
  tenant_id: z.string(),
  model_alias: z.string(),
  discount_bps: z.number().int(),
  expires_at: Timestamp.nullable(),
  version: z.number().int(),
  created_at: Timestamp,
  updated_at: Timestamp,
});
export const DiscountsResponse = z.object({ data: z.array(Offer).describe("Newest first, at most 200.") });
