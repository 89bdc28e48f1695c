import { subjectsFor } from "@gateway/events";
import type { Stack } from "@gateway/testkit";

export type PublishedEvent = { id: string; type: string; data: Record<string, unknown> };

/**
 * The events on the stack's stream under `<namespace>.events.<filter>` (`ledger.>`: every
 * ledger event), read from the start by an ordered consumer: what was delivered, whoever
 * stores it. The audit trail keeps no copy of a request's bookkeeping (docs/decisions/0330),
 * so the stream is where "published exactly once" is checked. A copy sent again after
 * JetStream's duplicate window would be a second message under the same event id.
 */
export async function publishedEvents(stack: Stack, filter: string): Promise<PublishedEvent[]> {
  const js = (await stack.nats()).jetstream();
  const consumer = await js.consumers.get(subjectsFor(stack.namespace).stream, { filterSubjects: `${stack.namespace}.events.${filter}` });
  const events: PublishedEvent[] = [];
  for (;;) {
    let got = 0;
    let pending = 0;
    for await (const m of await consumer.fetch({ max_messages: 1_000, expires: 1_000 })) {
      got++;
      pending = m.info.pending;
      events.push(m.json<PublishedEvent>());
    }
    if (got === 0 || pending === 0) return events;
  }
}

/**
 * The ledger's events of the tenants `tenant` picks, as delivered: `n` distinct event ids and
 * `distinct` transfers (entry ids). Exactly once per movement: both equal the transfers.
 */
export async function ledgerEventsOf(stack: Stack, tenant: (id: string) => boolean): Promise<{ n: number; distinct: number }> {
  const mine = (await publishedEvents(stack, "ledger.>")).filter((e) => tenant(String(e.data.tenant_id)));
  return { n: new Set(mine.map((e) => e.id)).size, distinct: new Set(mine.map((e) => String(e.data.entry_id))).size };
}
