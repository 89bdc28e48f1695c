import type { Keyring } from "@gateway/secrets";
import type { Logger } from "@gateway/logger";
import type { MessagingContext } from "../db.js";
import type { FileRefs } from "./files/file-refs.js";

/** What the bot, widget and conversation-hub verbs need beyond the database. */
export type HubContext = MessagingContext & {
  logger: Logger;
  /** Seals conversation webhook secrets at rest. */
  keyring: Keyring;
  /** Lifetime of a widget refresh token. */
  widgetRefreshTtlSeconds: number;
  /** Checks a webhook URL at registration (the same policy the deliveries use). */
  checkWebhookUrl(url: string): Promise<{ ok: true } | { ok: false; reason: string }>;
  /** Wakes the webhook dispatcher after a commit that queued deliveries. */
  kickWebhooks(): void;
  /** Tells every edge replica to forget what it cached of these widget sessions (ended, or rotated to a new generation), after the commit. */
  announceRevoked(sessionIds: string[]): Promise<void>;
  files: FileRefs;
};
