import { subjectsFor, typePrefix } from "@gateway/events";
import { readEnvelopes } from "@gateway/events-runtime";
import type { Stack } from "@gateway/testkit";

/** The outbox of every service drained; every ledger movement and usage reservation delivered to JetStream. */
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
  // The events their producer keeps (KEPT_AT_SOURCE: a usage record's, the ledger's) are not
  // copied into the audit trail (docs/decisions/0330): they are counted where they were
  // delivered, JetStream's stream, by type, their batches unpacked (docs/decisions/0331). It
  // drops a copy its duplicate window catches; a copy sent again after it, or in a batch
  // that differs from the first (a relay's round retried with more events), is a second
  // copy, which consumers drop by event id, so more copies than movements is no loss. The audit
  // consumer may still be catching up: wait until the counts stop moving.
  const subjects = subjectsFor(stack.namespace);
  const js = (await stack.nats()).jetstream();
  const delivered = async (types: string[]) => {
    const wanted = new Set(types);
    const prefixes = [...new Set(types.map(typePrefix))];
    let n = 0;
    for (const prefix of prefixes)
      for (const e of await readEnvelopes(js, subjects, { filter: `${stack.namespace}.events.${prefix}.>`, timeoutMs: 120_000 })) if (wanted.has(e.type)) n++;
    return n;
  };
  const counts = async () => {
    const [transfers] = await stack.sql<{ n: string }>("ledger", "SELECT count(*)::text AS n FROM transfers");
    const ledgerEvents = await delivered(["ledger.credited", "ledger.reserved", "ledger.captured", "ledger.voided", "ledger.posted", "ledger.released"]);
    const [records] = await stack.sql<{ n: string }>("managed-ai", "SELECT count(*)::text AS n FROM usage_records");
    const reserved = await delivered(["managed_ai.request_reserved"]);
    const [refused] = await stack.sql<{ n: string }>("jobs", "SELECT count(*)::text AS n FROM audit_events WHERE type = 'managed_ai.request_refused'");
    return { transfers: transfers!.n, ledgerEvents: String(ledgerEvents), records: records!.n, reserved: String(reserved), refused: refused!.n };
  };
  let last = await counts();
  for (;;) {
    const ok = BigInt(last.ledgerEvents) >= BigInt(last.transfers) && BigInt(last.reserved) >= BigInt(last.records) + BigInt(last.refused);
    if (ok) return { problems };
    if (Date.now() > until) break;
    await new Promise((r) => setTimeout(r, 1_000));
    last = await counts();
  }
  problems.push(`events: ${JSON.stringify(last)}`);
  return { problems };
}
