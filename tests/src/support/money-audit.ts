import { createClient } from "@gateway/grpc-kit";
import { ledgerV1 } from "@gateway/protos";
import type { Stack } from "@gateway/testkit";

/**
 * Review codes whose provider usage is unknown: the only records that may wait for an operator.
 * A client that disconnects is not one of them any more (docs/decisions/0177): its call is
 * finished and charged; only the request's deadline can cut it (`deadline_exceeded`).
 */
export const UNKNOWN_USAGE = new Set(["usage_unavailable", "deadline_exceeded", "stream_interrupted", "provider_malformed_response", "interrupted"]);

export type RecordRow = {
  id: string;
  tenant_id: string;
  status: string;
  error_code: string | null;
  reserved_units: string;
  final_units: string | null;
  hold_id: string | null;
  stream: boolean;
  usage_json: string | null;
  /** The allotment the reservation was claimed from (docs/decisions/0028). */
  allotment_id: string | null;
};

type HoldRow = { operation_id: string; hold_id: string; status: string; units: string; captured_units: string | null; tenant_id: string };

export type MoneyAudit = {
  records: number;
  byStatus: Record<string, number>;
  /** Records waiting for an operator (unknown usage, hold open). */
  waiting: number;
  /** The same, by error code. */
  waitingByCode: Record<string, number>;
  /** Sum of the final charges of completed records. */
  charged: bigint;
  /** Sum of what the ledger captured from these tenants' holds. */
  captured: bigint;
  /** Everything that disagrees; empty when the books are right. */
  problems: string[];
};

/**
 * Reads both sides independently (managed-ai's usage records, the ledger's own
 * tables) and reports every disagreement: a record whose outcome the ledger
 * knows but that is not final, a final record the ledger contradicts, a hold no
 * record explains, charges that differ from captures, or a broken invariant.
 */
export async function auditMoney(stack: Stack, tenantIds: string[]): Promise<MoneyAudit> {
  const records = await stack.sql<RecordRow>(
    "managed-ai",
    "SELECT id, tenant_id, status, error_code, reserved_units::text, final_units::text, hold_id, stream, usage_json, allotment_id FROM usage_records WHERE tenant_id = ANY($1)",
    [tenantIds],
  );
  const holds = await stack.sql<HoldRow>(
    "ledger",
    `SELECT t.operation_id, h.id AS hold_id, h.status, h.units::text, h.captured_units::text, h.tenant_id
       FROM transfers t JOIN holds h ON h.id = t.hold_id WHERE t.kind = 'reserve' AND t.tenant_id = ANY($1)`,
    [tenantIds],
  );
  const byOperation = new Map(holds.map((h) => [h.operation_id, h]));
  // Charges posted from allotments: one transfer per request, post:<request id>.
  const posts = new Map(
    (
      await stack.sql<{ operation_id: string; units: string }>(
        "ledger",
        "SELECT operation_id, units::text FROM transfers WHERE kind = 'post' AND tenant_id = ANY($1)",
        [tenantIds],
      )
    ).map((p) => [p.operation_id, p.units]),
  );
  const problems: string[] = [];
  const byStatus: Record<string, number> = {};
  let waiting = 0;
  const waitingByCode: Record<string, number> = {};
  let charged = 0n;
  const explained = new Set<string>();
  for (const r of records) {
    byStatus[r.status] = (byStatus[r.status] ?? 0) + 1;
    const hold = byOperation.get(`reserve:${r.id}`);
    if (hold) explained.add(hold.operation_id);
    const where = `${r.id} (${r.status}/${r.error_code ?? "-"}, hold ${hold ? hold.status : "none"})`;
    if (r.hold_id && hold && r.hold_id !== hold.hold_id) problems.push(`${where}: record names hold ${r.hold_id}, the ledger's is ${hold.hold_id}`);
    if (r.status === "completed") {
      charged += BigInt(r.final_units ?? "0");
      if (BigInt(r.reserved_units) === 0n) continue;
      if (r.allotment_id && !r.hold_id) {
        // Spent from an allotment: its charge is its own posted transfer (none for a zero charge).
        const posted = posts.get(`post:${r.id}`) ?? "0";
        if (posted !== (r.final_units ?? "0")) problems.push(`${where}: final ${r.final_units} but posted ${posted} from allotment ${r.allotment_id}`);
        continue;
      }
      if (hold?.status !== "captured") problems.push(`${where}: completed but the hold is not captured`);
      else if (hold.captured_units !== r.final_units) problems.push(`${where}: final ${r.final_units} but captured ${hold.captured_units}`);
    } else if (r.status === "failed") {
      if (hold && hold.status !== "voided") problems.push(`${where}: failed but the hold is ${hold.status}`);
    } else if (r.status === "review") {
      if (!hold) problems.push(`${where}: in review although the ledger never took a hold (it should be failed)`);
      else if (hold.status !== "open") problems.push(`${where}: in review although the ledger settled the hold (${hold.status})`);
      else if (!r.error_code || !UNKNOWN_USAGE.has(r.error_code))
        problems.push(`${where}: waits for an operator although its usage is known or nothing is owed`);
      else if (r.usage_json !== null) problems.push(`${where}: waits for an operator although the provider reported its usage`);
      else {
        waiting++;
        waitingByCode[r.error_code] = (waitingByCode[r.error_code] ?? 0) + 1;
      }
    } else {
      problems.push(`${where}: still ${r.status}`);
    }
  }
  for (const h of holds)
    if (!explained.has(h.operation_id) && !h.operation_id.startsWith("allot:"))
      problems.push(`hold ${h.hold_id} (${h.operation_id}, ${h.status}) belongs to no usage record`);
  const captured = holds.reduce((sum, h) => sum + BigInt(h.captured_units ?? "0"), 0n);
  if (captured !== charged) problems.push(`final charges ${charged} != captured ${captured}`);
  // Every posted charge belongs to a completed record drawn from an allotment, for its final units.
  const byId = new Map(records.map((r) => [r.id, r]));
  for (const [operation, units] of posts) {
    const r = byId.get(operation.slice("post:".length));
    if (r?.status !== "completed" || r.hold_id || r.final_units !== units) {
      problems.push(
        `${operation} (${units}) belongs to ${r ? `${r.id} (${r.status}/${r.error_code ?? "-"}, final ${r.final_units}, hold ${r.hold_id ?? "none"})` : "no usage record"}`,
      );
    }
  }

  const ledger = createClient(ledgerV1, stack.address("ledger"), { deadlineMs: 10_000, serviceToken: stack.serviceToken, tls: stack.tls });
  try {
    for (const tenantId of tenantIds) {
      const check = await ledger.CheckInvariant({ tenant_id: tenantId });
      if (!check.ok) problems.push(`ledger invariant broken for ${tenantId}: ${JSON.stringify(check.tenants)}`);
    }
  } finally {
    ledger.close();
  }
  return { records: records.length, byStatus, waiting, waitingByCode, charged, captured, problems };
}

/** Waits until no record of these tenants is `reserved` or resolvable in review any more (the reconciler's turn). */
export async function settledBooks(stack: Stack, tenantIds: string[], timeoutMs = 60_000): Promise<MoneyAudit> {
  const until = Date.now() + timeoutMs;
  let last: MoneyAudit | undefined;
  for (;;) {
    last = await auditMoney(stack, tenantIds).catch(() => last);
    if (last && last.problems.length === 0) return last;
    if (Date.now() > until) return last ?? auditMoney(stack, tenantIds);
    await new Promise((r) => setTimeout(r, 500));
  }
}
