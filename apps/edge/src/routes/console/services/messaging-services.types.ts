import { z } from "zod";
import { BudgetFields, bothOrNeither } from "../budget.types.js";
import { Id } from "@gateway/contract";

// webhook-push and socialops instances (CONTRACT.md sections 8 and 10), served by messaging.

const TargetId = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, "must be 1-64 of A-Z a-z 0-9 _ -");
const HttpUrl = z
  .string()
  .max(2048)
  .describe("http(s) URL; refused when it resolves to a loopback, private or link-local address (unless ALLOW_PRIVATE_TARGETS).");
const Secret = z.string().min(1).max(256);

export const WebhookTarget = z.strictObject({
  id: TargetId,
  type: z.literal("webhook"),
  url: HttpUrl,
  secret: Secret.nullable()
    .optional()
    .describe("Signs each body: X-Service-Signature: sha256=<hex HMAC-SHA256(secret, raw body)>. Omitted on update: kept; null: removed."),
  enabled: z.boolean().optional().describe("Default true."),
});
export const TelegramTarget = z.strictObject({
  id: TargetId,
  type: z.literal("telegram"),
  bot_token: z
    .string()
    .regex(/^[A-Za-z0-9:_-]{1,256}$/, "must be 1-256 of A-Z a-z 0-9 : _ -")
    .optional()
    .describe("Omitted on update: kept (unless connected_account_id is sent)."),
  connected_account_id: Id.optional().describe("A connected account (provider telegram) whose secret is the bot token."),
  chat_id: z.union([z.string().min(1).max(128), z.number().int()]),
  enabled: z.boolean().optional(),
});
export const PushConfig = z
  .strictObject({
    targets: z.array(z.discriminatedUnion("type", [WebhookTarget, TelegramTarget])).max(20),
    ...BudgetFields,
  })
  .superRefine((config, ctx) => bothOrNeither(config, ctx));
export const SocialOpsConfig = z.strictObject({
  reply_webhook_url: HttpUrl.nullable().optional().describe("Where replies to `generic` threads are delivered (POST, signed like push webhooks)."),
  reply_webhook_secret: Secret.nullable().optional(),
});

export const PutPushServiceRequest = z.strictObject({
  service_id: z.literal("webhook-push"),
  alias: Id,
  status: z.enum(["active", "disabled"]),
  config: PushConfig,
});
export const PutSocialOpsServiceRequest = z.strictObject({
  service_id: z.literal("socialops"),
  alias: Id,
  status: z.enum(["active", "disabled"]),
  config: SocialOpsConfig.default({}),
});

/** Configs as listed: secrets "[redacted]" (null when none is set). */
export const PushConfigView = z.object({
  targets: z.array(
    z.union([
      z.object({ id: z.string(), type: z.literal("webhook"), url: z.string(), secret: z.literal("[redacted]").nullable(), enabled: z.boolean() }),
      z.object({
        id: z.string(),
        type: z.literal("telegram"),
        bot_token: z.literal("[redacted]").nullable(),
        connected_account_id: z.string().nullable(),
        chat_id: z.union([z.string(), z.number()]),
        enabled: z.boolean(),
      }),
    ]),
  ),
  budget_units: z.number().int().optional().describe("Spend budget per budget_period (units); absent: none."),
  budget_period: z.enum(["day", "month"]).optional(),
});
export const SocialOpsConfigView = z.object({ reply_webhook_url: z.string().nullable(), reply_webhook_secret: z.literal("[redacted]").nullable() });
