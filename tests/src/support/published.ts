import { subjectsFor } from "@gateway/events";
import { readEnvelopes } from "@gateway/events-runtime";
import type { Stack } from "@gateway/testkit";

export type PublishedEvent = { id: string; type: string; data: Record<string, unknown> };

/**
 * The events on the stack's stream under `<namespace>.events.<filter>` (`ledger.>`: every
 * ledger event, its batches included), read from the start by an ordered consumer, batches
 * unpacked (docs/decisions/0331): what was delivered, whoever stores it. The audit trail
 * keeps no copy of a request's bookkeeping (docs/decisions/0330), so the stream is where
 * "published exactly once" is checked. A copy sent again after JetStream's duplicate window,
 * or in a batch other than its first copy's, would be a second envelope under the same event id.
 */
export async function publishedEvents(stack: Stack, filter: string): Promise<PublishedEvent[]> {
  const subjects = subjectsFor(stack.namespace);
  return (await readEnvelopes((await stack.nats()).jetstream(), subjects, { filter: `${stack.namespace}.events.${filter}` })) as PublishedEvent[];
}

/**
 * The ledger's events of the tenants `tenant` picks, as delivered: `n` distinct event ids and
 * `distinct` transfers (entry ids). Exactly once per movement: both equal the transfers.
 */
export async function ledgerEventsOf(stack: Stack, tenant: (id: string) => boolean): Promise<{ n: number; distinct: number }> {
  const mine = (await publishedEvents(stack, "ledger.>")).filter((e) => tenant(String(e.data.tenant_id)));
  return { n: new Set(mine.map((e) => e.id)).size, distinct: new Set(mine.map((e) => String(e.data.entry_id))).size };
}
