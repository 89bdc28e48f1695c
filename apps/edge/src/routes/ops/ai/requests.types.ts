import { z } from "zod";
import { Id, UnitsNumber } from "@gateway/contract";
import { NextCursor } from "../../page.js";

/** Spec 2.1's usage record. */
export const UsageRecord = z.object({
  id: z.string().describe("The gateway request id (X-Request-ID)."),
  mode: z.enum(["managed", "byok"]).describe("byok: recorded at the instance's own pricing, never charged to the balance."),
  api_key_id: z.string().nullable().describe("The API key that made the request."),
  service_alias: z.string(),
  model_alias: z.string(),
  price_id: z.string(),
  status: z.enum(["reserved", "completed", "failed", "review"]),
  reserved_units: UnitsNumber,
  final_units: UnitsNumber.nullable(),
  usage_json: z.string().nullable(),
  error_code: z.string().nullable(),
  api: z
    .enum(["chat_completions", "messages", "embeddings"])
    .nullable()
    .describe(
      "The API the request came through: chat_completions (OpenAI's Chat Completions, and the native chat routes built on it), messages (Anthropic's Messages), embeddings; null on records older than this field.",
    ),
  created_at: z.string(),
});

/** What operators see of a settlement, in addition. */
export const OperatorUsageRecord = UsageRecord.extend({
  tenant_id: z.string(),
  stream: z.boolean(),
  discount_bps: z.number().int(),
  hold_expires_at: z.string(),
  refunded_units: UnitsNumber.nullable(),
  release_reason: z.string().nullable(),
  released_by: z.string().nullable(),
  updated_at: z.string(),
});

export const UsageListResponse = z.object({ data: z.array(UsageRecord), next_cursor: NextCursor });
export const OperatorUsageListResponse = z.object({ data: z.array(OperatorUsageRecord) });

export const RequestParams = z.object({ id: Id });
export type RequestParams = z.infer<typeof RequestParams>;

export const ReleaseRequest = z.strictObject({ reason: z.string().trim().min(1).max(240) });
export type ReleaseRequest = z.infer<typeof ReleaseRequest>;

export const ReleaseResponse = z.object({ data: z.object({ id: z.string(), status: z.literal("failed"), refunded: UnitsNumber }) });

export const CaptureRequest = z.strictObject({
  units: UnitsNumber.describe("Units of USD 0.0001 to charge: at most the request's reserved_units (more is 422); the rest of the hold is refunded."),
  reason: z.string().trim().min(1).max(240),
});
export type CaptureRequest = z.infer<typeof CaptureRequest>;

export const CaptureResponse = z.object({
  data: z.object({ id: z.string(), status: z.literal("completed"), final_units: UnitsNumber, refunded: UnitsNumber }),
});
