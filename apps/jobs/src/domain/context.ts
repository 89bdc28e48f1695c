import type { Transact } from "@gateway/events-runtime";
import type { LedgerCalls, Reclaimed } from "@gateway/ledger-client";
import type { Logger } from "@gateway/logger";
import type { Keyring } from "@gateway/secrets";
import type { Prisma, PrismaClient } from "../generated/prisma/client.js";
import type { TronNode } from "../tron/node.js";
import type { LeasePricing } from "../tron/pricing.js";
import type { EnergyProvider } from "../tron/provider.js";
import type { CallbackSettings } from "../callbacks/target.js";

export type Tx = Prisma.TransactionClient;

export type TronSettings = {
  mode: "sandbox" | "live";
  pricing: LeasePricing;
  quoteTtlSeconds: number;
  verifyTimeoutSeconds: number;
  verifyPollMs: number;
  /** Delivered energy may fall this far short of the order, in basis points, and still verify (docs/decisions/0245). */
  deliveryToleranceBps: number;
};

/** Account webhooks and alerts (docs/decisions/0210): the balance they watch and the loops to wake. */
export type AccountNotices = {
  /** A tenant's available balance as the ledger's views show it (GetBalance: allotments included). */
  availableUnits(tenantId: string): Promise<bigint>;
  /** Deliveries were committed: the local webhook dispatcher looks now. */
  kickDeliveries(): void;
  /** Balance checks were asked for: the local checker looks now. */
  kickBalanceChecks(): void;
};

/** What the domain verbs get: the database and, for leases, their collaborators. */
export type JobsContext = {
  prisma: PrismaClient;
  transact: Transact<Tx>;
  logger: Logger;
  /** Seals callback secrets at rest. */
  keyring: Keyring;
  /** The ledger, for a lease's hold (one gRPC call per movement). */
  ledger: LedgerCalls;
  /**
   * The tenant's allotments (managed-ai) give back what no call has claimed, when the
   * ledger refused a lease's hold (ledger-client's `reserveReclaiming`, docs/decisions/0028).
   */
  reclaimAllotments: (tenantId: string) => Promise<Reclaimed>;
  provider: EnergyProvider;
  node: TronNode;
  tron: TronSettings;
  callbacks: CallbackSettings;
  /** Tells the local callback dispatcher that deliveries were committed. */
  kickCallbacks: () => void;
  accounts: AccountNotices;
};

export type { CallbackSettings };
