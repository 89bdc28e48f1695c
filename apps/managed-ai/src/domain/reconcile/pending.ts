import type { ManagedAiContext } from "../context.js";

/**
 * Is there anything the reconciler may have to do later, as the database stands: a record
 * still `reserved` or in `review`, an allotment not closed, a budget claim not settled, or a
 * completed record past the captures checkpoint (not checked yet)? When there is none, work
 * can only come from a request that starts later. One statement, each part an index probe
 * (usage_records (status, hold_expires_at) and (settled_at, id), allotments (state, updated_at),
 * budget_claims (settled_at, created_at)), whatever the size of the history (checked with
 * EXPLAIN ANALYZE on 100,000 settled records: 4 buffers, under a millisecond).
 */
export async function reconcilerWorkPending(ctx: Pick<ManagedAiContext, "sql">): Promise<boolean> {
  const [row] = await ctx.sql.query<{ pending: boolean }>(
    // The captures part is a scalar subquery ordered like the index, with the checkpoint as
    // an InitPlan parameter: an index range scan from the checkpoint on. As a join inside
    // EXISTS the planner scanned all of usage_records (100,000 rows, 30-150 ms).
    `SELECT EXISTS (SELECT 1 FROM usage_records WHERE status IN ('reserved', 'review'))
         OR EXISTS (SELECT 1 FROM allotments WHERE state IN ('opening', 'open', 'closing'))
         OR EXISTS (SELECT 1 FROM budget_claims WHERE settled_at IS NULL)
         OR (SELECT u.id FROM usage_records u
             WHERE u.settled_at >= (SELECT settled_at FROM reconciler_checkpoints WHERE name = 'captures')
               AND (u.settled_at > (SELECT settled_at FROM reconciler_checkpoints WHERE name = 'captures')
                    OR u.id > (SELECT record_id FROM reconciler_checkpoints WHERE name = 'captures'))
               AND u.status = 'completed' AND u.hold_id IS NOT NULL
             ORDER BY u.settled_at, u.id LIMIT 1) IS NOT NULL AS pending`,
    [],
  );
  return row?.pending ?? true;
}
