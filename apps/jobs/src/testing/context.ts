import { randomBytes } from "node:crypto";
import { Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import { parseKeyring } from "@gateway/secrets";
import { AppError } from "@gateway/errors";
import { createTransact } from "@gateway/events-runtime";
import { newId } from "@gateway/contract/ids";
import type { Client } from "@gateway/grpc-kit";
import { LedgerCalls } from "@gateway/ledger-client";
import { createLogger } from "@gateway/logger";
import type { ledgerV1 } from "@gateway/protos";
import { createPrisma } from "../db.js";
import type { JobsContext, Tx } from "../domain/context.js";
import type { DelegationCheck, DelegationScan, HeadCheck, TransactionCheck, TronNode } from "../tron/node.js";
import type { EnergyProvider, FulfilmentOutcome, OrderOutcome, OrderRequest, ProviderPeriod } from "../tron/provider.js";
import { freshDatabase } from "@gateway/testkit";

const PRISMA_DIR = fileURLToPath(new URL("../../prisma", import.meta.url));

type Hold = { holdId: string; tenantId: string; units: bigint; status: "open" | "captured" | "voided" };

/**
 * An in-memory ledger with the real one's contract for what leases use:
 * operation ids replay their first result, a reserve beyond the balance fails
 * with insufficient_balance, a hold is settled once.
 */
export class FakeLedger {
  readonly available = new Map<string, bigint>();
  readonly holds = new Map<string, Hold>();
  readonly ops = new Map<string, unknown>();
  readonly calls: { method: string; operation_id: string }[] = [];
  failNext: AppError | undefined;

  credit(tenantId: string, units: bigint): void {
    this.available.set(tenantId, (this.available.get(tenantId) ?? 0n) + units);
  }

  reserved(tenantId: string): bigint {
    return [...this.holds.values()].filter((h) => h.tenantId === tenantId && h.status === "open").reduce((s, h) => s + h.units, 0n);
  }

  private once<T>(method: string, op: string, fn: () => T): T {
    this.calls.push({ method, operation_id: op });
    if (this.failNext) {
      const err = this.failNext;
      this.failNext = undefined;
      throw err;
    }
    if (this.ops.has(op)) return this.ops.get(op) as T;
    const result = fn();
    this.ops.set(op, result);
    return result;
  }

  client(): Client<typeof ledgerV1> {
    const self = this;
    return {
      async Reserve(req: { operation_id: string; tenant_id: string; units: string }) {
        return self.once("Reserve", req.operation_id, () => {
          const units = BigInt(req.units);
          const available = self.available.get(req.tenant_id) ?? 0n;
          if (available < units) throw new AppError("insufficient_balance", "short");
          self.available.set(req.tenant_id, available - units);
          const holdId = newId("hold");
          self.holds.set(holdId, { holdId, tenantId: req.tenant_id, units, status: "open" });
          return { hold_id: holdId };
        });
      },
      async Capture(req: { operation_id: string; hold_id: string; units: string }) {
        return self.once("Capture", req.operation_id, () => {
          const hold = self.holds.get(req.hold_id);
          if (hold?.status !== "open") throw new AppError("conflict", "hold settled");
          hold.status = "captured";
          self.available.set(hold.tenantId, (self.available.get(hold.tenantId) ?? 0n) + hold.units - BigInt(req.units));
          return {};
        });
      },
      async Void(req: { operation_id: string; hold_id: string }) {
        return self.once("Void", req.operation_id, () => {
          const hold = self.holds.get(req.hold_id);
          if (hold?.status !== "open") throw new AppError("conflict", "hold settled");
          hold.status = "voided";
          self.available.set(hold.tenantId, (self.available.get(hold.tenantId) ?? 0n) + hold.units);
          return {};
        });
      },
      close() {},
    } as unknown as Client<typeof ledgerV1>;
  }
}

/**
 * A scriptable provider: idempotent by client order id, like the real contract
 * asks. It names its delegator (the generic API's way) unless `reportsTransactions`,
 * in which case it reports `txids[orderId]` as the order's delegation transactions.
 */
export class FakeProvider implements EnergyProvider {
  readonly name = "fake";
  /** Idempotent by client order id, as the generic API. */
  readonly repeatable = true;
  readonly requests: OrderRequest[] = [];
  readonly orders = new Map<string, string>();
  next: OrderOutcome["kind"] = "ordered";
  refusal: Extract<OrderOutcome, { kind: "refused" }>["code"] = "provider_refused";
  reportsTransactions = false;
  readonly txids = new Map<string, string[]>();
  fulfilmentNext: FulfilmentOutcome | undefined;
  /** What `minimumEnergy` reports. */
  minimum: number | null = null;

  period(): ProviderPeriod | null {
    return null;
  }

  async minimumEnergy(): Promise<number | null> {
    return this.minimum;
  }

  async fulfilment(order: { orderId: string }): Promise<FulfilmentOutcome> {
    return this.fulfilmentNext ?? { kind: "progress", txids: this.txids.get(order.orderId) ?? [] };
  }

  async order(request: OrderRequest): Promise<OrderOutcome> {
    this.requests.push(request);
    if (this.next === "refused") return { kind: "refused", code: this.refusal, reason: "no energy" };
    if (this.next === "unreachable") return { kind: "unreachable", reason: "connection failed" };
    const id = this.orders.get(request.clientOrderId) ?? `ord_${this.orders.size + 1}`;
    this.orders.set(request.clientOrderId, id);
    return { kind: "ordered", orderId: id, delegator: this.reportsTransactions ? undefined : "TETk6ZoJe5fGYUkrJbXYSsacympnK4fbbd" };
  }
}

/** `energy`: what the delegator's sum shows; `transactions`: energy per confirmed delegation transaction. */
export class FakeNode implements TronNode {
  energy = 0;
  calls = 0;
  readonly transactions = new Map<string, number>();
  async delegatedEnergy(): Promise<DelegationCheck> {
    this.calls += 1;
    return { kind: "energy", energy: this.energy };
  }
  async head(): Promise<HeadCheck> {
    return { kind: "head", block: 1 };
  }
  /** The transactions of `transactions`, as if all were to the receiver since the block asked. */
  async delegationsTo(): Promise<DelegationScan> {
    return { kind: "scanned", txids: [...this.transactions.keys()], head: 1 };
  }
  async delegatedByTransactions(txids: string[]): Promise<TransactionCheck> {
    this.calls += 1;
    const confirmed = txids.filter((t) => this.transactions.has(t));
    const rejected = txids.filter((t) => !this.transactions.has(t)).map((txid) => ({ txid, reason: "not found on chain (yet)" }));
    return { kind: "energy", energy: confirmed.reduce((s, t) => s + this.transactions.get(t)!, 0), confirmed, rejected };
  }
}

export type TestContext = {
  ctx: JobsContext;
  ledger: FakeLedger;
  provider: FakeProvider;
  node: FakeNode;
  outbox(): Promise<{ type: string; payload: Record<string, unknown> }[]>;
  close(): Promise<void>;
};

export const TEST_KEYS = `t1:${randomBytes(32).toString("base64")}`;

/** A jobs context on its own freshly migrated database (dropped by `close`), with fake third parties and ledger. */
export async function createTestContext(overrides: Partial<JobsContext> = {}): Promise<TestContext> {
  const db = await freshDatabase({ prefix: "gw_test_jobs", prismaDir: PRISMA_DIR });
  const pool = db.pool;
  const prisma = createPrisma(pool);
  const ledger = new FakeLedger();
  const provider = new FakeProvider();
  const node = new FakeNode();
  const logger = createLogger({ service: "jobs", level: "silent", destination: new Writable({ write: (_c, _e, cb) => cb() }) });
  const ctx: JobsContext = {
    prisma,
    transact: createTransact<Tx>((fn) => prisma.$transaction(fn, { timeout: 15_000, maxWait: 10_000 })),
    logger,
    keyring: parseKeyring(TEST_KEYS),
    // As main.ts makes it: the package's client over the fake, one call per movement.
    ledger: new LedgerCalls(ledger.client(), logger, { batching: false }),
    // No allotments here: managed-ai's are tested with managed-ai, and across services in the stack tests.
    reclaimAllotments: async () => "none" as const,
    provider,
    node,
    tron: {
      mode: "live",
      pricing: { baseUnits: 100, unitsPerMegaEnergyHour: 40_000 },
      quoteTtlSeconds: 300,
      verifyTimeoutSeconds: 60,
      verifyPollMs: 100,
      deliveryToleranceBps: 100,
    },
    callbacks: { allowHttpLoopback: true, baseDelayMs: 1_000, timeoutMs: 2_000 },
    kickCallbacks: () => undefined,
    accounts: {
      availableUnits: async (tenantId) => ledger.available.get(tenantId) ?? 0n,
      kickDeliveries: () => undefined,
      kickBalanceChecks: () => undefined,
    },
    ...overrides,
  };
  return {
    ctx,
    ledger,
    provider,
    node,
    outbox: async () =>
      (await prisma.outboxEvent.findMany({ orderBy: { seq: "asc" } })).map((e) => ({ type: e.type, payload: e.payload as Record<string, unknown> })),
    async close() {
      await prisma.$disconnect();
      await db.drop();
    },
  };
}
