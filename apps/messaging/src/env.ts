import { z } from "zod";
import { address, bool, env, int, loadEnv as load, serviceEnvShape, url } from "@gateway/config";
import { DEV_ENCRYPTION_KEYS, keyringProblem } from "@gateway/secrets";

export const MessagingEnv = z
  .object({
    ...serviceEnvShape({ service: "messaging", grpcPort: 50054, metricsPort: 9104 }),
    ENCRYPTION_KEYS: env.secret(
      "Keys that encrypt push target secrets, bot tokens, reply-webhook and conversation-webhook secrets at rest: comma-separated `<key id>:<base64 of 32 bytes>`; the first encrypts, the others only decrypt (docs/decisions/0015). Required in production.",
      DEV_ENCRYPTION_KEYS,
    ),
    ALLOW_PRIVATE_TARGETS: bool(
      "Allow push, reply-webhook and conversation-webhook URLs that resolve to loopback, private or link-local addresses, and plain http to them (local testing only, refused in production).",
      false,
    ),
    // Push and SocialOps
    LEDGER_GRPC_URL: address("host:port of the ledger service (holds for push messages).", "127.0.0.1:50051"),
    LEDGER_DEADLINE_MS: int("Deadline of each ledger call made for a push message.", 3_000, { min: 50 }),
    MANAGED_AI_GRPC_URL: address("host:port of the managed-ai service (connected accounts of chat-messenger targets).", "127.0.0.1:50052"),
    PUSH_PRICE_UNITS: int("Price of one push message per enabled target, in units of USD 0.0001 (reserved per target, captured per delivered target).", 1, {
      min: 0,
    }),
    PUSH_TARGET_TIMEOUT_MS: int("How long one push target may take to answer; past it the target counts as not delivered.", 10_000, { min: 100, max: 120_000 }),
    PUSH_HOLD_TTL_SECONDS: int("A push message's hold expires this long after its reservation.", 900, { min: 60 }),
    PUSH_RECOVERY_AFTER_MS: int(
      "A push message still `sending` this long after its last change was interrupted (a crash): it is settled from the outcomes recorded so far. Keep it above the target timeout plus the ledger deadlines.",
      60_000,
      { min: 1_000 },
    ),
    PUSH_RECOVERY_INTERVAL_MS: int(
      "The shortest time between two looks for interrupted push messages (also the retry interval of a settlement that failed). A look is made when the oldest message still sending becomes interrupted, and every PUSH_RECOVERY_AFTER_MS while none is sending.",
      10_000,
      { min: 200 },
    ),
    TELEGRAM_API_BASE: url("Base URL of the Telegram Bot API for chat-messenger targets (`{base}/bot<token>/sendMessage`).", "https://api.telegram.org", [
      "http:",
      "https:",
    ]),
    REPLY_TIMEOUT_MS: int("How long a SocialOps reply target may take to answer one delivery attempt.", 10_000, { min: 100, max: 120_000 }),
    REPLY_MAX_ATTEMPTS: int("Delivery attempts of one SocialOps reply before it is recorded as failed.", 8, { min: 1, max: 100 }),
    REPLY_BASE_DELAY_MS: int("First retry delay of a failed reply delivery; it doubles per attempt, with jitter.", 1_000, { min: 10 }),
    // Bot, widget and conversation hub
    WIDGET_REFRESH_TOKEN_TTL_SECONDS: int("Lifetime of a widget refresh token (each is usable once).", 86_400, { min: 300, max: 30 * 86_400 }),
    CONVERSATION_WEBHOOK_BASE_DELAY_MS: int(
      "First retry delay of a failed conversation webhook delivery; doubles per attempt, with jitter (8 attempts at most).",
      1_000,
      {
        min: 1,
      },
    ),
    CONVERSATION_WEBHOOK_TIMEOUT_MS: int("How long a conversation webhook may take to answer; longer is a failed attempt.", 10_000, { min: 100, max: 60_000 }),
    CONVERSATION_WEBHOOK_POLL_MS: int("How often the webhook dispatcher looks for due deliveries (new events wake it at once).", 500, { min: 10, max: 60_000 }),
  })
  .superRefine((cfg, ctx) => {
    const problem = keyringProblem(cfg.ENCRYPTION_KEYS, cfg.NODE_ENV === "production");
    if (problem) ctx.addIssue({ code: "custom", path: ["ENCRYPTION_KEYS"], message: problem });
    if (cfg.NODE_ENV === "production" && cfg.ALLOW_PRIVATE_TARGETS) {
      ctx.addIssue({
        code: "custom",
        path: ["ALLOW_PRIVATE_TARGETS"],
        message: "turns off every check of customer URLs (SSRF) and is for local testing: refused in production",
      });
    }
  });
export type MessagingEnv = z.output<typeof MessagingEnv>;

export function loadEnv(source: Record<string, string | undefined>): MessagingEnv {
  return load(MessagingEnv, source);
}
