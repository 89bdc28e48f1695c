import type { Stack } from "@gateway/testkit";

/** The outbox of every service drained; ledger movements and usage reservations audited exactly once each. */
export async function eventsCheck(stack: Stack, timeoutMs = 60_000): Promise<{ problems: string[] }> {
  const problems: string[] = [];
  const until = Date.now() + timeoutMs;
  for (const service of ["edge", "ledger", "managed-ai"] as const) {
    for (;;) {
      const [row] = await stack.sql<{ n: string }>(service, "SELECT count(*)::text AS n FROM outbox_events");
      if (row?.n === "0") break;
      if (Date.now() > until) {
        problems.push(`${service}: ${row?.n} events never left the outbox`);
        break;
      }
      await new Promise((r) => setTimeout(r, 500));
    }
  }
  // The audit consumer may still be catching up: wait until the counts stop moving.
  const counts = async () => {
    const [transfers] = await stack.sql<{ n: string }>("ledger", "SELECT count(*)::text AS n FROM transfers");
    const [ledgerEvents] = await stack.sql<{ n: string; d: string }>(
      "jobs",
      "SELECT count(*)::text AS n, count(DISTINCT data->>'operation_id')::text AS d FROM audit_events WHERE type IN ('ledger.credited','ledger.reserved','ledger.captured','ledger.voided','ledger.posted','ledger.released')",
    );
    const [records] = await stack.sql<{ n: string }>("managed-ai", "SELECT count(*)::text AS n FROM usage_records");
    const [reserved] = await stack.sql<{ n: string; d: string }>(
      "jobs",
      "SELECT count(*)::text AS n, count(DISTINCT data->>'request_id')::text AS d FROM audit_events WHERE type = 'managed_ai.request_reserved'",
    );
    const [refused] = await stack.sql<{ n: string }>("jobs", "SELECT count(*)::text AS n FROM audit_events WHERE type = 'managed_ai.request_refused'");
    return {
      transfers: transfers!.n,
      ledgerEvents: ledgerEvents!.n,
      ledgerOps: ledgerEvents!.d,
      records: records!.n,
      reserved: reserved!.n,
      reservedIds: reserved!.d,
      refused: refused!.n,
    };
  };
  let last = await counts();
  for (;;) {
    const ok =
      last.transfers === last.ledgerEvents &&
      last.ledgerEvents === last.ledgerOps &&
      BigInt(last.reserved) === BigInt(last.records) + BigInt(last.refused) &&
      last.reserved === last.reservedIds;
    if (ok) return { problems };
    if (Date.now() > until) break;
    await new Promise((r) => setTimeout(r, 1_000));
    last = await counts();
  }
  problems.push(`events: ${JSON.stringify(last)}`);
  return { problems };
}
