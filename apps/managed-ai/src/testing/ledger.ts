import { randomBytes } from "node:crypto";
import { createClient, type Client } from "@gateway/grpc-kit";
import { LedgerCalls } from "@gateway/ledger-client";
import { createLogger } from "@gateway/logger";
import { ledgerV1 } from "@gateway/protos";
import { startLedger, type LedgerService } from "@gateway/testkit";

/**
 * The real ledger for managed-ai's own tests: the built service as a process on a
 * fresh database (the test kit's `startLedger`), the `LedgerCalls` managed-ai's
 * context gets, and the reads tests assert with (all over gRPC, as a client sees it).
 */
export type TestLedger = {
  service: LedgerService;
  client: Client<typeof ledgerV1>;
  /** What a context's `ledgerCalls` is (batching as in production). */
  calls: LedgerCalls;
  credit(tenantId: string, units: bigint): Promise<void>;
  /** The balance view (allotments' unclaimed rest as available, CONTRACT.md section 4). */
  balance(tenantId: string): Promise<{ available: bigint; reserved: bigint }>;
  hold(holdId: string): Promise<Awaited<ReturnType<Client<typeof ledgerV1>["GetHold"]>>>;
  /** Stored movements by operation id (absent: never taken). */
  transfer(operationId: string): Promise<{ kind: string; units: bigint; holdId: string } | null>;
  /** credits − charges = available + held, the journal balanced, every allotment within its units. */
  invariant(tenantId: string): Promise<{ ok: boolean; credits: bigint; captured: bigint }>;
  close(): Promise<void>;
};

export async function startTestLedger(): Promise<TestLedger> {
  const service = await startLedger();
  const client = createClient(ledgerV1, service.address, { deadlineMs: 10_000, serviceToken: service.serviceToken, name: "ledger" });
  const calls = new LedgerCalls(client, createLogger({ service: "managed-ai-test", level: "silent" }));
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
    hold: (holdId) => client.GetHold({ hold_id: holdId }),
    async transfer(operationId) {
      const [t] = (await client.GetTransfers({ operation_ids: [operationId] })).transfers;
      return t ? { kind: t.kind, units: BigInt(t.units), holdId: t.hold_id } : null;
    },
    async invariant(tenantId) {
      const r = await client.CheckInvariant({ tenant_id: tenantId });
      const t = r.tenants[0];
      return { ok: r.ok, credits: BigInt(t?.credits ?? "0"), captured: BigInt(t?.captured ?? "0") };
    },
    async close() {
      client.close();
      await service.close();
    },
  };
}
