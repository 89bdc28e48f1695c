import { randomBytes } from "node:crypto";
import { createPool, databaseUrl } from "@gateway/db-kit";
import { isAppError } from "@gateway/errors";
import { createClient, type Client } from "@gateway/grpc-kit";
import { LedgerCalls, reserveOperation } from "@gateway/ledger-client";
import { createLogger } from "@gateway/logger";
import { ledgerV1 } from "@gateway/protos";
import { startLedger, type LedgerService } from "@gateway/testkit";

/** A hold as the ledger answers it (GetHold), its amounts as bigints. */
export type HoldView = {
  holdId: string;
  tenantId: string;
  status: "open" | "captured" | "voided";
  units: bigint;
  /** Captured (an allotment: posted so far). */
  captured: bigint;
  /** Given back to available. */
  released: bigint;
  allotment: boolean;
};

/**
 * The real ledger for managed-ai's own tests: the built service as a process on a
 * fresh database (the test kit's `startLedger`), the `LedgerCalls` managed-ai's
 * context gets, and the reads tests assert with: over gRPC, as a client sees it,
 * except what no call shows (an account's own balances, an allotment's reported
 * claim), read from the ledger's database.
 */
export type TestLedger = {
  service: LedgerService;
  client: Client<typeof ledgerV1>;
  /** What a context's `ledgerCalls` is (batching as in production). */
  calls: LedgerCalls;
  credit(tenantId: string, units: bigint): Promise<void>;
  /** The balance view (allotments' unclaimed rest as available, CONTRACT.md section 4). */
  balance(tenantId: string): Promise<{ available: bigint; reserved: bigint }>;
  /** The tenant's accounts as the journal keeps them: an open allotment's units all held (zeros before the first credit). */
  account(tenantId: string): Promise<{ available: bigint; held: bigint }>;
  hold(holdId: string): Promise<Awaited<ReturnType<Client<typeof ledgerV1>["GetHold"]>>>;
  /** The hold, or null when the ledger has none of that id. */
  holdView(holdId: string): Promise<HoldView | null>;
  /** The hold a request took (reserve:<id>), or null when it never took one. */
  holdOf(requestId: string): Promise<HoldView | null>;
  /** Every hold of the tenant, oldest first. */
  holdsOf(tenantId: string): Promise<HoldView[]>;
  /** Stored movements by operation id (absent: never taken). */
  transfer(operationId: string): Promise<{ kind: string; units: bigint; holdId: string } | null>;
  /** The tenant's movements (credits included), oldest first: a replay adds none. */
  movements(tenantId: string): Promise<Movement[]>;
  /** Their operation ids. */
  operations(tenantId: string): Promise<string[]>;
  /** The newest claim managed-ai reported for an allotment (null: none reported, or no such allotment). */
  claimed(holdId: string): Promise<bigint | null>;
  /** credits − charges = available + held, the journal balanced, every allotment within its units. */
  invariant(tenantId: string): Promise<{ ok: boolean; credits: bigint; captured: bigint }>;
  close(): Promise<void>;
};

/** One stored movement (a transfer) as ListEntries shows it. */
export type Movement = { operationId: string; kind: string; units: bigint; holdId: string; reason: string };

/** The ledger's GetHolds takes at most this many ids; ListEntries pages by at most this many. */
const MAX_HOLDS_PER_READ = 1_000;
const ENTRIES_PAGE = 200;

const viewOf = (h: Awaited<ReturnType<Client<typeof ledgerV1>["GetHold"]>>): HoldView => ({
  holdId: h.hold_id,
  tenantId: h.tenant_id,
  status: h.status as HoldView["status"],
  units: BigInt(h.units),
  captured: BigInt(h.captured_units || "0"),
  released: BigInt(h.released_units || "0"),
  allotment: h.allotment,
});

export async function startTestLedger(): Promise<TestLedger> {
  const service = await startLedger();
  const client = createClient(ledgerV1, service.address, { deadlineMs: 10_000, serviceToken: service.serviceToken, tls: service.tls, name: "ledger" });
  const calls = new LedgerCalls(client, createLogger({ service: "managed-ai-test", level: "silent" }));
  // Only for what no call shows; everything else is read over gRPC.
  const db = createPool(databaseUrl(service.serverUrl, service.databaseName), { poolSize: 2 });

  const movements = async (tenantId: string) => {
    const all: Movement[] = [];
    let cursor = "";
    do {
      const page = await client.ListEntries({ tenant_id: tenantId, limit: ENTRIES_PAGE, cursor });
      all.push(...page.entries.map((e) => ({ operationId: e.operation_id, kind: e.kind, units: BigInt(e.units), holdId: e.hold_id, reason: e.reason })));
      cursor = page.next_cursor;
    } while (cursor);
    return all.reverse();
  };
  const holdView = async (holdId: string) => {
    try {
      return viewOf(await client.GetHold({ hold_id: holdId }));
    } catch (err) {
      if (isAppError(err) && err.code === "not_found") return null;
      throw err;
    }
  };
  const transfer = async (operationId: string) => {
    const [t] = (await client.GetTransfers({ operation_ids: [operationId] })).transfers;
    return t ? { kind: t.kind, units: BigInt(t.units), holdId: t.hold_id } : null;
  };

  return {
    service,
    client,
    calls,
    async credit(tenantId, units) {
      await client.Credit({ operation_id: `credit-${randomBytes(6).toString("hex")}`, tenant_id: tenantId, units: units.toString(), reason: "test funds" });
    },
    async balance(tenantId) {
      const b = await client.GetBalance({ tenant_id: tenantId });
      return { available: BigInt(b.available_units), reserved: BigInt(b.reserved_units) };
    },
    async account(tenantId) {
      const { rows } = await db.query<{ available: string; held: string }>("SELECT available::text, held::text FROM accounts WHERE tenant_id = $1", [tenantId]);
      return { available: BigInt(rows[0]?.available ?? "0"), held: BigInt(rows[0]?.held ?? "0") };
    },
    hold: (holdId) => client.GetHold({ hold_id: holdId }),
    holdView,
    async holdOf(requestId) {
      const reserved = await transfer(reserveOperation(requestId));
      return reserved ? holdView(reserved.holdId) : null;
    },
    async holdsOf(tenantId) {
      const ids = (await movements(tenantId)).filter((m) => m.kind === "reserve").map((m) => m.holdId);
      const byId = new Map<string, HoldView>();
      for (let i = 0; i < ids.length; i += MAX_HOLDS_PER_READ) {
        for (const h of (await client.GetHolds({ hold_ids: ids.slice(i, i + MAX_HOLDS_PER_READ) })).holds) byId.set(h.hold_id, viewOf(h));
      }
      return ids.map((id) => byId.get(id)!);
    },
    transfer,
    movements,
    operations: async (tenantId) => (await movements(tenantId)).map((m) => m.operationId),
    async claimed(holdId) {
      const { rows } = await db.query<{ claimed: string }>("SELECT claimed::text FROM allotments WHERE hold_id = $1 AND claimed_version > 0", [holdId]);
      return rows[0] ? BigInt(rows[0].claimed) : null;
    },
    async invariant(tenantId) {
      const r = await client.CheckInvariant({ tenant_id: tenantId });
      const t = r.tenants[0];
      return { ok: r.ok, credits: BigInt(t?.credits ?? "0"), captured: BigInt(t?.captured ?? "0") };
    },
    async close() {
      client.close();
      await db.end();
      await service.close();
    },
  };
}
