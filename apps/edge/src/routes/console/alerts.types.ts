import { z } from "zod";
import { UnitsNumber } from "@gateway/contract";

export const PutAlertsRequest = z.strictObject({
  balance_low_units: UnitsNumber.nullable().describe(
    "`balance.low` goes to the account webhooks once each time the available balance falls below this (units of USD 0.0001); null: no alert.",
  ),
});
export type PutAlertsRequest = z.infer<typeof PutAlertsRequest>;

export const AlertsResponse = z.object({ data: z.object({ balance_low_units: z.number().int().nullable() }) });
