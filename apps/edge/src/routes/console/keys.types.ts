import { z } from "zod";
import { parseCidrs } from "../../domain/keys/client-ip.js";
import { SCOPES, SERVICE_ALIAS_PATTERN } from "../../domain/keys/scopes.js";
import { Id, listPageQuery } from "@gateway/contract";
import { NextCursor } from "../page.js";
import { BudgetFields, BudgetState, bothOrNeither } from "./budget.types.js";

const Cidr = z.string().refine((value) => {
  try {
    parseCidrs([value]);
    return true;
  } catch {
    return false;
  }
}, "must be an IPv4/IPv6 address or CIDR");

export const CreateKeyRequest = z
  .strictObject({
    name: z.string().trim().min(1).max(100).optional(),
    scopes: z.array(z.enum(SCOPES)).max(32).optional().describe("Absent or empty: denied on every scope-protected route. '*' allows all."),
    service_aliases: z
      .array(z.string().regex(SERVICE_ALIAS_PATTERN, "must be <service_id>:<alias>, e.g. ai-model:chat"))
      .max(100)
      .nullable()
      .optional()
      .describe("Absent, null or empty: any instance."),
    allowed_ips: z.array(Cidr).max(100).nullable().optional().describe("Absent, null or empty: any address."),
    daily_quota: z.number().int().min(1).max(1_000_000_000).nullable().optional().describe("Requests per UTC day; absent: unlimited."),
    rate_limit_per_minute: z.number().int().min(1).max(1_000_000).nullable().optional().describe("Requests in any 60 s; absent: unlimited."),
    concurrency_limit: z.number().int().min(1).max(100_000).nullable().optional().describe("Requests in flight at once; absent: unlimited."),
    expires_at: z.iso
      .datetime({ offset: true })
      .nullable()
      .optional()
      .refine((v) => v === null || v === undefined || new Date(v).getTime() > Date.now(), "must be in the future"),
    ...BudgetFields,
  })
  .superRefine((body, ctx) => bothOrNeither(body, ctx));
export type CreateKeyRequest = z.infer<typeof CreateKeyRequest>;

export const KeyItem = z.object({
  id: z.string(),
  name: z.string(),
  prefix: z.string().describe("The start of the key's plaintext."),
  scopes: z.array(z.string()),
  service_aliases: z.array(z.string()).nullable(),
  allowed_ips: z.array(z.string()).nullable(),
  daily_quota: z.number().int().nullable(),
  rate_limit_per_minute: z.number().int().nullable(),
  concurrency_limit: z.number().int().nullable(),
  expires_at: z.string().nullable(),
  created_at: z.string(),
  budget: BudgetState,
});

/** A key's policy change: only its budget for now (null for both removes it). */
export const UpdateKeyRequest = z
  .strictObject({
    budget_units: BudgetFields.budget_units.unwrap().nullable().describe("Spend budget in units per budget_period; null removes the budget."),
    budget_period: BudgetFields.budget_period.unwrap().nullable().describe("day | month (UTC); null with budget_units null."),
  })
  .superRefine((body, ctx) => bothOrNeither(body, ctx));
export type UpdateKeyRequest = z.infer<typeof UpdateKeyRequest>;
export const KeyResponse = z.object({ data: KeyItem });

export const KeyWithSecretResponse = z.object({ data: KeyItem.extend({ key: z.string().describe("The plaintext key: shown only here.") }) });
export const KeyListResponse = z.object({ data: z.array(KeyItem), next_cursor: NextCursor });
export const KeyListQuery = z.strictObject(listPageQuery({ item: "keys", fallback: "the newest 200" }));
export type KeyListQuery = z.infer<typeof KeyListQuery>;
export const KeyParams = z.object({ id: Id });
export type KeyParams = z.infer<typeof KeyParams>;
