import { egressPolicy } from "@gateway/outbound";
import { randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";
import { createTransact } from "@gateway/events-runtime";
import { AppError } from "@gateway/errors";
import type { Client } from "@gateway/grpc-kit";
import { LedgerCalls } from "@gateway/ledger-client";
import { createLogger } from "@gateway/logger";
import type { ledgerV1 } from "@gateway/protos";
import { parseKeyring } from "@gateway/secrets";
import type { AppContext } from "../domain/app-context.js";
import { createPrisma, type Tx } from "../db.js";
import { freshDatabase } from "@gateway/testkit";
import { withFeed } from "../domain/feed/project.js";

const PRISMA_DIR = fileURLToPath(new URL("../../prisma", import.meta.url));

type Hold = { hold_id: string; tenant_id: string; units: bigint; status: "open" | "captured" | "voided"; captured: bigint };

/**
 * An in-memory ledger with the real one's rules that matter here: operation ids
 * replay their first result (the same id with other parameters is a conflict),
 * a hold is settled once, a reserve beyond the balance is refused.
 */
export class FakeLedger {
  readonly balances = new Map<string, bigint>();
  readonly holds = new Map<string, Hold>();
  readonly calls: string[] = [];
  private readonly ops = new Map<string, { params: string; result: unknown }>();

  private once<T>(op: string, params: unknown, run: () => T): T {
    this.calls.push(op);
    const seen = this.ops.get(op);
    const key = JSON.stringify(params);
    if (seen) {
      if (seen.params !== key) throw new AppError("conflict", `operation ${op} was used with other parameters`);
      // A replay is answered as stored, and says so (as the ledger's reserve does).
      return (seen.result && typeof seen.result === "object" && "replayed" in seen.result ? { ...seen.result, replayed: true } : seen.result) as T;
    }
    const result = run();
    this.ops.set(op, { params: key, result });
    return result;
  }

  /** A hold as the ledger answers it. */
  view(hold: Hold) {
    const released = hold.status === "open" ? 0n : hold.units - hold.captured;
    return {
      hold_id: hold.hold_id,
      status: hold.status,
      units: hold.units.toString(),
      captured_units: hold.captured.toString(),
      released_units: released.toString(),
    };
  }

  client(): Client<typeof ledgerV1> {
    const self = this;
    return {
      async Reserve(req: { operation_id: string; tenant_id: string; units: string | number }) {
        return self.once(req.operation_id, [req.tenant_id, String(req.units)], () => {
          const units = BigInt(req.units);
          const available = self.balances.get(req.tenant_id) ?? 0n;
          if (available < units) throw new AppError("insufficient_balance", "short");
          self.balances.set(req.tenant_id, available - units);
          const hold = { hold_id: `hold_${self.holds.size + 1}`, tenant_id: req.tenant_id, units, status: "open" as const, captured: 0n };
          self.holds.set(hold.hold_id, hold);
          return { hold_id: hold.hold_id, replayed: false };
        });
      },
      async Capture(req: { operation_id: string; hold_id: string; units: string | number }) {
        return self.once(req.operation_id, [req.hold_id, String(req.units)], () => {
          const hold = self.holds.get(req.hold_id)!;
          if (hold.status !== "open") throw new AppError("conflict", "settled");
          hold.status = "captured";
          hold.captured = BigInt(req.units);
          self.balances.set(hold.tenant_id, (self.balances.get(hold.tenant_id) ?? 0n) + hold.units - hold.captured);
          return { hold: self.view(hold) };
        });
      },
      async Void(req: { operation_id: string; hold_id: string }) {
        return self.once(req.operation_id, [req.hold_id], () => {
          const hold = self.holds.get(req.hold_id)!;
          if (hold.status !== "open") throw new AppError("conflict", "settled");
          hold.status = "voided";
          self.balances.set(hold.tenant_id, (self.balances.get(hold.tenant_id) ?? 0n) + hold.units);
          return { hold: self.view(hold) };
        });
      },
      async GetHold(req: { hold_id: string }) {
        return self.view(self.holds.get(req.hold_id)!);
      },
    } as unknown as Client<typeof ledgerV1>;
  }
}

export type TestContext = {
  ctx: AppContext;
  ledger: FakeLedger;
  outbox(type?: string): Promise<{ type: string; payload: Record<string, unknown> }[]>;
  close(): Promise<void>;
};

/** A push/SocialOps context on its own freshly migrated database (dropped by `close`), with a fake ledger. */
export async function createTestContext(overrides: Partial<AppContext> = {}): Promise<TestContext> {
  const db = await freshDatabase({ prefix: "gw_test_msg", prismaDir: PRISMA_DIR, poolSize: 20 });
  const pool = db.pool;
  const prisma = createPrisma(pool);
  const ledger = new FakeLedger();
  const logger = createLogger({ service: "messaging-test", level: "silent" });
  const ctx: AppContext = {
    prisma,
    transact: withFeed(createTransact<Tx>((fn) => prisma.$transaction(fn))),
    logger,
    keyring: parseKeyring(`k1:${randomBytes(32).toString("base64")}`),
    egress: egressPolicy({ allowPrivateTargets: true }),
    // As app-wiring.ts makes it: the package's client over the fake, one call per movement.
    ledger: new LedgerCalls(ledger.client(), logger, { batching: false }),
    budgets: { reserve: async () => undefined, settle: async () => undefined },
    // No allotments here: managed-ai's are tested with managed-ai, and across services in the stack tests.
    reclaimAllotments: async () => "none" as const,
    resolveConnectedAccount: async () => {
      throw new AppError("not_found", "no connected accounts in tests");
    },
    push: { priceUnits: 5n, targetTimeoutMs: 2_000, holdTtlSeconds: 900, telegramApiBase: "http://127.0.0.1:1" },
    reply: { timeoutMs: 2_000, maxAttempts: 3, baseDelayMs: 10 },
    ...overrides,
  };
  return {
    ctx,
    ledger,
    async outbox(type) {
      const rows = await prisma.$queryRawUnsafe<{ type: string; payload: Record<string, unknown> }[]>("SELECT type, payload FROM outbox_events ORDER BY seq");
      return type ? rows.filter((r) => r.type === type) : rows;
    },
    async close() {
      await prisma.$disconnect();
      await db.drop();
    },
  };
}
