import { z } from "zod";
import { Id, idempotencyKeyHeader, listPageQuery, usdAmount } from "@gateway/contract";
import { NextCursor } from "../../page.js";

// Bounds of CONTRACT.md section 9 / spec section 8; the jobs service checks them again.
const Receiver = z.string().min(1).max(64).describe("TRON address of the account that receives the energy (base58check, T...).");
const Energy = z.number().int().min(1_000).max(5_000_000);
const Duration = z.number().int().min(300).max(86_400);

export const QuoteRequest = z.object({ receiver: Receiver, energy: Energy, duration_seconds: Duration });
export type QuoteRequest = z.infer<typeof QuoteRequest>;

export const QuoteResponse = z.object({
  data: z.object({
    quote_id: z.string(),
    receiver: z.string(),
    energy: z.number().int(),
    duration_seconds: z.number().int(),
    cost: z.number().describe("USD."),
    cost_units: z.number().int().describe("Units of USD 0.0001."),
    expires_at: z.string(),
    provider: z.string().describe("The energy rental provider in use (`generic`, `itrx`)."),
    provider_period: z
      .object({ name: z.string(), seconds: z.number().int() })
      .nullable()
      .describe(
        "The provider's rental period the lease will be ordered for: the smallest that covers duration_seconds (itrx: 1H, 1D..30D). Null when the provider takes the duration as is.",
      ),
  }),
});

export const LeaseRequest = z
  .object({
    quote_id: Id,
    max_cost: usdAmount(1e12).describe("USD ceiling: a quote whose cost is above it gets 409."),
    receiver: Receiver,
    energy: Energy,
    duration_seconds: Duration,
    callback_url: z.string().min(1).max(2048).optional().describe("HTTPS URL that receives signed `job.updated` callbacks (live mode only)."),
    callback_secret: z.string().min(16).max(256).optional().describe("HMAC-SHA256 key of X-Service-Signature; required with callback_url."),
  })
  .refine((b) => b.callback_url === undefined || b.callback_secret !== undefined, {
    message: "callback_secret is required with callback_url",
    path: ["callback_secret"],
  });
export type LeaseRequest = z.infer<typeof LeaseRequest>;

export const LeaseAccepted = z.object({
  data: z.object({ job_id: z.string(), lease_id: z.string(), status: z.literal("pending"), dry_run: z.boolean() }),
});

export const LeaseView = z.object({
  id: z.string(),
  job_id: z.string(),
  status: z.enum(["pending", "running", "succeeded", "failed", "canceled", "expired"]),
  receiver: z.string(),
  energy: z.number().int(),
  duration_seconds: z.number().int(),
  cost: z.number(),
  cost_units: z.number().int(),
  dry_run: z.boolean(),
  provider_order_id: z.string().nullable(),
  quote_id: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
});
export const LeaseResponse = z.object({ data: LeaseView });
export const LeaseListResponse = z.object({ data: z.array(LeaseView), next_cursor: NextCursor });
export const LeaseListQuery = z.strictObject(listPageQuery({ item: "leases", fallback: "the newest 100" }));
export type LeaseListQuery = z.infer<typeof LeaseListQuery>;
export const LeaseParams = z.object({ id: Id });
export type LeaseParams = z.infer<typeof LeaseParams>;

export const LeaseHeaders = idempotencyKeyHeader(
  "1-128 of A-Z a-z 0-9 . _ : -; a repeat with the same parameters gets the same job (charged once), with others 409.",
);
