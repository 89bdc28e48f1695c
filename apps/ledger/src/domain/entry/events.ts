import { z } from "zod";
import { parseInput } from "@gateway/errors";
import type { LedgerContext } from "../context.js";
import { OperationId, TenantId } from "../schemas.js";

export const MAX_EVENT_OPERATIONS = 100;
export const ListEventsInput = z.object({ tenant_id: TenantId, operation_ids: z.array(OperationId).min(1).max(MAX_EVENT_OPERATIONS) });
export type ListEventsInput = z.input<typeof ListEventsInput>;

/** A ledger event as it was published (view ledger_events, the one place that derives it). */
export type LedgerEventRow = { id: string; type: string; dataJson: string; requestId: string | null; createdAt: Date };

/**
 * The events of the tenant's transfers that these operations made, oldest first
 * (docs/decisions/0330): the journal keeps every transfer, so the audit trail stores no copy
 * of the ledger's events and the request view reads them here. One statement: the transfers by
 * operation id (its unique index), their events by seq (the view is a projection of transfers).
 */
export async function listEvents({ ctx, input }: { ctx: LedgerContext; input: ListEventsInput }): Promise<LedgerEventRow[]> {
  const q = parseInput(ListEventsInput, input);
  const rows = await ctx.prisma.$queryRawUnsafe<{ id: string; type: string; data_json: string; request_id: string | null; created_at: Date }[]>(
    `SELECT e.id, e.type, e.payload::text AS data_json, e.request_id, e.created_at FROM ledger_events e
     WHERE e.seq IN (SELECT t.seq FROM transfers t WHERE t.operation_id = ANY($1::text[]) AND t.tenant_id = $2)
     ORDER BY e.seq`,
    q.operation_ids,
    q.tenant_id,
  );
  return rows.map((r) => ({ id: r.id, type: r.type, dataJson: r.data_json, requestId: r.request_id, createdAt: r.created_at }));
}
