import type { LedgerCalls, Reclaimed } from "@gateway/ledger-client";
import type { Logger } from "@gateway/logger";
import type { EgressPolicy } from "@gateway/outbound";
import type { Keyring } from "@gateway/secrets";
import type { MessagingContext } from "../db.js";

/** A budget a push send counts against (a key's or the push instance's). */
export type PushBudget = { scope: "key" | "instance"; id: string; limitUnits: bigint; period: "day" | "month" };
export type PushBudgets = {
  /** All or none; AppError `conflict` with a `budget` extra when one has no room. */
  reserve(input: { messageId: string; tenantId: string; budgets: PushBudget[]; units: bigint }): Promise<void>;
  /** The message's final charge replaces its reservation (0 releases); once, whoever calls first. */
  settle(messageId: string, finalUnits: bigint): Promise<void>;
};

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
  /** The ledger, for a push message's hold (one gRPC call per movement). */
  ledger: LedgerCalls;
  /** Spend budgets, kept by managed-ai (docs/decisions/0024): push sends reserve and settle against them there. */
  budgets: PushBudgets;
  /**
   * The tenant's allotments (managed-ai) give back what no call has claimed, when the
   * ledger refused a push's hold (ledger-client's `reserveReclaiming`, docs/decisions/0028).
   */
  reclaimAllotments: (tenantId: string) => Promise<Reclaimed>;
  resolveConnectedAccount: ConnectedAccountResolver;
  push: {
    priceUnits: bigint;
    targetTimeoutMs: number;
    holdTtlSeconds: number;
    telegramApiBase: string;
  };
  reply: { timeoutMs: number; maxAttempts: number; baseDelayMs: number };
};
