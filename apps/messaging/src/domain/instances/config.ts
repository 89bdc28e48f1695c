import { z } from "zod";
import { Id } from "@gateway/contract";
import { AppError } from "@gateway/errors";
import { checkUrl, type EgressPolicy } from "@gateway/outbound";
import { openCredential, sealCredential, type Keyring } from "@gateway/secrets";

/** Shown instead of any stored secret. */
export const REDACTED = "[redacted]";

const TargetId = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, "must be 1-64 of A-Z a-z 0-9 _ -");
const HttpUrl = z
  .string()
  .max(2048)
  .refine((v) => {
    try {
      return ["http:", "https:"].includes(new URL(v).protocol);
    } catch {
      return false;
    }
  }, "must be an http or https URL");
const Secret = z.string().min(1).max(256);
const BotToken = z.string().regex(/^[A-Za-z0-9:_-]{1,256}$/, "must be 1-256 of A-Z a-z 0-9 : _ -");
const ChatId = z.union([z.string().min(1).max(128), z.number().int()]);

/** Push targets as a client sends them (CONTRACT.md section 8). Secrets omitted on update keep the stored ones; null removes them. */
export const WebhookTargetInput = z.strictObject({
  id: TargetId,
  type: z.literal("webhook"),
  url: HttpUrl,
  secret: Secret.nullable().optional(),
  enabled: z.boolean().default(true),
});
export const TelegramTargetInput = z.strictObject({
  id: TargetId,
  type: z.literal("telegram"),
  bot_token: BotToken.optional(),
  connected_account_id: Id.optional(),
  chat_id: ChatId,
  enabled: z.boolean().default(true),
});
export const PushConfigInput = z
  .strictObject({
    targets: z
      .array(z.discriminatedUnion("type", [WebhookTargetInput, TelegramTargetInput]))
      .max(20)
      .refine((ts) => new Set(ts.map((t) => t.id)).size === ts.length, "target ids must be unique"),
    /** Spend budget (docs/decisions/0024): units per UTC period, both or neither; counted by managed-ai. */
    budget_units: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER).optional(),
    budget_period: z.enum(["day", "month"]).optional(),
  })
  .refine((c) => (c.budget_units === undefined) === (c.budget_period === undefined), {
    message: "send budget_units and budget_period together, or neither",
    path: ["budget_units"],
  });
export const SocialOpsConfigInput = z.strictObject({
  reply_webhook_url: HttpUrl.nullable().optional(),
  reply_webhook_secret: Secret.nullable().optional(),
});

/** A sealed secret inside a stored config (base64 of nonce || ciphertext || tag). */
type Sealed = { key_id: string; sealed: string };
export type StoredWebhookTarget = { id: string; type: "webhook"; url: string; enabled: boolean; secret: Sealed | null };
export type StoredTelegramTarget = {
  id: string;
  type: "telegram";
  chat_id: string | number;
  enabled: boolean;
  bot_token: Sealed | null;
  connected_account_id: string | null;
};
export type StoredTarget = StoredWebhookTarget | StoredTelegramTarget;
export type StoredPushConfig = { targets: StoredTarget[]; budget_units?: string; budget_period?: "day" | "month" };
export type StoredSocialOpsConfig = { reply_webhook_url: string | null; reply_webhook_secret: Sealed | null };

function context(instanceId: string, field: string): string {
  return `gateway.messaging.app_instance.${field}:${instanceId}`;
}

function seal(keyring: Keyring, plaintext: string, ctx: string): Sealed {
  const s = sealCredential(keyring, plaintext, ctx);
  return { key_id: s.keyId, sealed: Buffer.from(s.ciphertext).toString("base64") };
}

function open(keyring: Keyring, sealed: Sealed, ctx: string): string {
  return openCredential(keyring, { keyId: sealed.key_id, ciphertext: Buffer.from(sealed.sealed, "base64") }, ctx);
}

export const targetSecretContext = (instanceId: string, targetId: string) => context(instanceId, `target.${targetId}.secret`);
export const targetBotTokenContext = (instanceId: string, targetId: string) => context(instanceId, `target.${targetId}.bot_token`);
export const replySecretContext = (instanceId: string) => context(instanceId, "reply_webhook_secret");

export const openSecret = open;

async function refuseUnsafe(url: string, policy: EgressPolicy, field: string): Promise<void> {
  const checked = await checkUrl(url, policy);
  // A name that does not resolve now may later (and is checked again at every delivery); an address that is refused is refused.
  if (!checked.ok && checked.reason !== "dns_failed") throw new AppError("validation_failed", `${field}: ${checked.reason}`, { extra: { param: field } });
}

/** The stored push config: secrets sealed, omitted ones kept from `previous`, URLs checked against the egress policy. */
export async function storePushConfig(
  input: z.output<typeof PushConfigInput>,
  previous: StoredPushConfig | null,
  instanceId: string,
  keyring: Keyring,
  policy: EgressPolicy,
): Promise<StoredPushConfig> {
  const targets: StoredTarget[] = [];
  for (const [i, t] of input.targets.entries()) {
    const before = previous?.targets.find((p) => p.id === t.id && p.type === t.type);
    if (t.type === "webhook") {
      await refuseUnsafe(t.url, policy, `config.targets[${i}].url`);
      const kept = before?.type === "webhook" ? before.secret : null;
      const secret = t.secret === undefined ? kept : t.secret === null ? null : seal(keyring, t.secret, targetSecretContext(instanceId, t.id));
      targets.push({ id: t.id, type: "webhook", url: t.url, enabled: t.enabled, secret });
    } else {
      if (t.bot_token !== undefined && t.connected_account_id !== undefined) {
        throw new AppError("invalid_request", `config.targets[${i}]: send bot_token or connected_account_id, not both`);
      }
      const kept = before?.type === "telegram" ? before.bot_token : null;
      const botToken =
        t.bot_token !== undefined ? seal(keyring, t.bot_token, targetBotTokenContext(instanceId, t.id)) : t.connected_account_id !== undefined ? null : kept;
      const account = t.connected_account_id ?? null;
      if (!botToken && !account) throw new AppError("invalid_request", `config.targets[${i}]: a telegram target needs bot_token or connected_account_id`);
      targets.push({ id: t.id, type: "telegram", chat_id: t.chat_id, enabled: t.enabled, bot_token: botToken, connected_account_id: account });
    }
  }
  return {
    targets,
    ...(input.budget_units !== undefined && input.budget_period !== undefined
      ? { budget_units: String(input.budget_units), budget_period: input.budget_period }
      : {}),
  };
}

export async function storeSocialOpsConfig(
  input: z.output<typeof SocialOpsConfigInput>,
  previous: StoredSocialOpsConfig | null,
  instanceId: string,
  keyring: Keyring,
  policy: EgressPolicy,
): Promise<StoredSocialOpsConfig> {
  const url = input.reply_webhook_url === undefined ? (previous?.reply_webhook_url ?? null) : input.reply_webhook_url;
  if (url) await refuseUnsafe(url, policy, "config.reply_webhook_url");
  const secret =
    input.reply_webhook_secret === undefined
      ? (previous?.reply_webhook_secret ?? null)
      : input.reply_webhook_secret === null
        ? null
        : seal(keyring, input.reply_webhook_secret, replySecretContext(instanceId));
  return { reply_webhook_url: url, reply_webhook_secret: secret };
}

/** The config as clients see it: every secret "[redacted]" (null when none is set). */
export function redactedConfig(serviceId: string, stored: unknown): Record<string, unknown> {
  if (serviceId === "webhook-push") {
    const cfg = stored as StoredPushConfig;
    return {
      targets: cfg.targets.map((t) =>
        t.type === "webhook"
          ? { id: t.id, type: t.type, url: t.url, secret: t.secret ? REDACTED : null, enabled: t.enabled }
          : {
              id: t.id,
              type: t.type,
              bot_token: t.bot_token ? REDACTED : null,
              connected_account_id: t.connected_account_id,
              chat_id: t.chat_id,
              enabled: t.enabled,
            },
      ),
      ...(cfg.budget_units && cfg.budget_period ? { budget_units: Number(cfg.budget_units), budget_period: cfg.budget_period } : {}),
    };
  }
  const cfg = stored as StoredSocialOpsConfig;
  return { reply_webhook_url: cfg.reply_webhook_url, reply_webhook_secret: cfg.reply_webhook_secret ? REDACTED : null };
}
