import type { Client } from "@gateway/grpc-kit";
import type { Logger } from "@gateway/logger";
import type { EgressPolicy } from "@gateway/outbound";
import type { ledgerV1 } from "@gateway/protos";
import type { Keyring } from "@gateway/secrets";
import type { MessagingContext } from "./db.js";

/** A tenant's connected account with its secret in clear (managed-ai's RevealConnectedAccount). */
export type ConnectedAccount = { id: string; provider: string; secret: string };
export type ConnectedAccountResolver = (tenantId: string, id: string) => Promise<ConnectedAccount>;

/** What the push and SocialOps verbs get, passed in (tests hand in real collaborators or their own). */
export type AppContext = MessagingContext & {
  logger: Logger;
  /** Seals and opens target secrets, bot tokens and reply-webhook secrets. */
  keyring: Keyring;
  /** Where customer-supplied URLs may point (ALLOW_PRIVATE_TARGETS). */
  egress: EgressPolicy;
  ledger: Client<typeof ledgerV1>;
  resolveConnectedAccount: ConnectedAccountResolver;
  push: {
    priceUnits: bigint;
    targetTimeoutMs: number;
    holdTtlSeconds: number;
    telegramApiBase: string;
  };
  reply: { timeoutMs: number; maxAttempts: number; baseDelayMs: number };
};
