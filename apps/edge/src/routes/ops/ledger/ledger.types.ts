import { z } from "zod";
import { Id, PositiveUnitsNumber, UnitsNumber, idempotencyKeyHeader } from "@gateway/contract";

export const TenantParams = z.object({ tenant_id: Id });
export type TenantParams = z.infer<typeof TenantParams>;

export const CreditRequest = z.strictObject({
  units: PositiveUnitsNumber.describe("Units of USD 0.0001 to add to the available balance."),
  reason: z.string().min(1).max(240),
});
export type CreditRequest = z.infer<typeof CreditRequest>;

export const CreditResponse = z.object({
  data: z.object({ entry_id: z.string(), available_units: UnitsNumber }),
});

export const Balance = z.object({
  currency: z.literal("USD"),
  available_units: UnitsNumber,
  reserved_units: UnitsNumber,
});

export const TenantBalanceResponse = z.object({ data: Balance.extend({ tenant_id: z.string() }) });
export const BalanceResponse = z.object({ data: Balance });

export const CreditHeaders = idempotencyKeyHeader("1-128 of A-Z a-z 0-9 . _ : -");
